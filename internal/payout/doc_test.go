package payout

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestRequestDocumentsItsBounds: the request's member documents state the
// bounds the code holds, said from the constants that hold them, so that a
// bound changed in one place fails here.
func TestRequestDocumentsItsBounds(t *testing.T) {
	tests := []struct {
		typ    reflect.Type
		member string
		want   string
	}{
		{reflect.TypeFor[Request](), "Description", fmt.Sprintf("%d to %d characters", MinDescriptionLen, maxDescriptionLen)},
		{reflect.TypeFor[Request](), "ScheduledAt", fmt.Sprintf("at most %d days ahead", MaxScheduleAheadDays)},
		{reflect.TypeFor[Request](), "ExternalID", fmt.Sprintf("Up to %d characters", maxExternalIDLen)},
		{reflect.TypeFor[Request](), "PayoutTransactionDetails", fmt.Sprintf("1 to %d,%03d transactions", MaxTransactions/1000, MaxTransactions%1000)},
		{reflect.TypeFor[TransactionRequest](), "FirstName", fmt.Sprintf("Up to %d characters", maxNameLen)},
		{reflect.TypeFor[TransactionRequest](), "LastName", fmt.Sprintf("Up to %d characters", maxNameLen)},
		{reflect.TypeFor[TransactionRequest](), "ExternalID", fmt.Sprintf("Up to %d characters", maxExternalIDLen)},
	}
	for _, tt := range tests {
		t.Run(tt.typ.Name()+"."+tt.member, func(t *testing.T) {
			f, ok := tt.typ.FieldByName(tt.member)
			if doc := f.Tag.Get("doc"); !ok || !strings.Contains(doc, tt.want) {
				t.Errorf("doc %q does not say %q", doc, tt.want)
			}
		})
	}
}
