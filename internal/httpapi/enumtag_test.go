package httpapi

import (
	"go/ast"
	"go/token"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// enumSubsets are the enum members that list some of their type's
// constants on purpose, each with the reason.
var enumSubsets = map[string]string{
	"gateway.CreateResult.Status":     "a payment is created pending",
	"gateway.LinkCreated.Status":      "a link is created pending",
	"transfer.SimulateRequest.Status": "a simulation ends a transfer: completed or failed",
}

// enumSpellings are the constants whose JSON spelling is not their value
// (a MarshalJSON of their type), by type: value to spelling.
var enumSpellings = map[string]map[string]string{
	"contact.KYCStatus": {"": "none"}, // KYCNone
}

// stringEnums are the enum members of type string, each tied to the
// constants whose values it lists, or, with no constants to tie to, the
// reason (the API's own word, or data rather than constants).
var stringEnums = map[string]struct {
	constants []string
	literal   string
}{
	"contact.NewContact.Type":        {constants: []string{"contact.Individual", "contact.Organization"}},
	"contact.NewContact.Gender":      {constants: []string{"contact.Male", "contact.Female"}},
	"contact.ContactChanges.Type":    {constants: []string{"contact.Individual", "contact.Organization"}},
	"contact.ContactChanges.Gender":  {constants: []string{"contact.Male", "contact.Female"}},
	"contact.ResendRequest.ResendTo": {constants: []string{"contact.ResendToEmail", "contact.ResendToPhone"}},
	"contact.Message.Channel":        {constants: []string{"contact.ChannelEmail", "contact.ChannelSMS"}},
	"gateway.CardSummary.Brand":      {constants: []string{"gateway.BrandVisa", "gateway.BrandMastercard", "gateway.BrandAmex"}},
	"treasury.Account.Status":        {constants: []string{"merchant.TreasuryActive", "merchant.TreasuryInReview", "merchant.TreasuryRejected"}},
	"transfer.Request.Direction":     {constants: []string{"transfer.directionIn", "transfer.directionOut"}},
	"reconcile.Summary.Format":       {constants: []string{"statement.Camt053", "statement.BAI2", "statement.CSV"}},
	"gateway.Payment.Currency":       {literal: "PayID payments are in AUD"},
	"gateway.Payment.PaidWith":       {literal: "the two ways a gateway payment is paid, or none yet"},
	"gateway.Link.Currency":          {literal: "the currencies of the Payment Gateway 3 catalogue (data)"},
	"gateway.Link.PayinMethodCode":   {literal: "the codes of the Payment Gateway 3 catalogue (data)"},
	"httpapi.accessToken.TokenType":  {literal: "OAuth's token type"},
	"httpapi.contactStatus.Status":   {literal: "the contact endpoints' fixed answer"},
	"httpapi.resendAnswer.Status":    {literal: "the contact endpoints' fixed answer"},
	"httpapi.statusOK.Status":        {literal: "a fixed answer"},
	"payid.Receipt.Outcome":          {literal: "what the simulated NPP payment met"},
	"payid.PaymentRequest.Currency":  {literal: "PayID is AUD only"},
	"payid.StaticPayID.Status":       {literal: "a static PayID is listed while active"},
	"payin.SimulateRequest.Status":   {literal: "a simulation's two outcomes"},
	"payin.MethodView.PaymentType":   {literal: "the method list's word for a payin method"},
	"payout.MethodView.PaymentType":  {literal: "the method list's word for a payout method"},
	"payout.V1Payout.Currency":       {literal: "v1 payouts are in AUD"},
	"transfer.Party.Type":            {literal: "the three kinds of a transfer's end"},
	"webhook.Ping.Type":              {literal: "the one type of a ping"},
	"dispute.Dispute.PaymentType":    {constants: []string{"gateway.TypeGatewayPayment", "gateway.TypePayinLink"}},
	"gateway.Refund.PaymentType":     {constants: []string{"gateway.TypeGatewayPayment", "gateway.TypePayinLink"}},
	"dispute.ResolveRequest.Outcome": {constants: []string{"dispute.Won", "dispute.Lost"}},
	"dispute.Dispute.Reason":         {literal: "the reasons of dispute.Reasons, a list (data)"},
	"dispute.File.ContentType":       {literal: "the three file types evidence takes, told by content"},
	"gateway.Refund.Status":          {literal: "a card refund is done at once"},
}

// TestEnumTagsMatchTheirConstants: an enum tag restates its type's
// constants, so it is held to them: a member of a typed status lists every
// constant of its type (enumSubsets aside) and nothing else, and a member
// of type string lists exactly the constants stringEnums ties it to. A
// constant renamed, added or dropped without its tags fails here.
func TestEnumTagsMatchTheirConstants(t *testing.T) {
	fset, files := sourceFiles(t)
	typed := typedConstants(files)
	named := stringConstants(files)
	seen := map[string]bool{}
	for _, ef := range enumFields(fset, files) {
		seen[ef.key] = true
		t.Run(ef.key, func(t *testing.T) {
			var want []string
			if ef.typ == "string" {
				tie, ok := stringEnums[ef.key]
				if !ok {
					t.Fatalf("%s: a string member with an enum tag: tie it to its constants in stringEnums (or give the reason it has none)", ef.at)
				}
				if tie.literal != "" {
					return
				}
				for _, c := range tie.constants {
					v, ok := named[c]
					if !ok {
						t.Fatalf("%s: no string constant %s", ef.at, c)
					}
					want = append(want, v)
				}
			} else {
				for _, v := range typed[ef.typ] {
					if s, ok := enumSpellings[ef.typ][v]; ok {
						v = s
					}
					want = append(want, v)
				}
				if len(want) == 0 {
					t.Fatalf("%s: type %s has no string constants to list", ef.at, ef.typ)
				}
			}
			for _, v := range ef.values {
				if !slices.Contains(want, v) {
					t.Errorf("%s: enum lists %q, which is no constant of %s (%q)", ef.at, v, ef.typ, want)
				}
			}
			if enumSubsets[ef.key] != "" {
				return
			}
			for _, v := range want {
				if !slices.Contains(ef.values, v) {
					t.Errorf("%s: enum %q leaves out %q", ef.at, ef.values, v)
				}
			}
		})
	}
	for key := range stringEnums {
		if !seen[key] {
			t.Errorf("stringEnums names %s, which has no enum tag", key)
		}
	}
	for key := range enumSubsets {
		if !seen[key] {
			t.Errorf("enumSubsets names %s, which has no enum tag", key)
		}
	}
}

// typedConstants maps "package.Type" to the values of the string constants
// declared with that type.
func typedConstants(files []*ast.File) map[string][]string {
	out := map[string][]string{}
	for _, f := range files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				typ, ok := vs.Type.(*ast.Ident)
				if !ok {
					continue
				}
				for i := range vs.Names {
					if lit, ok := valueAt(vs, i).(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						out[f.Name.Name+"."+typ.Name] = append(out[f.Name.Name+"."+typ.Name], v)
					}
				}
			}
		}
	}
	return out
}

// enumField is a struct member with an enum tag: where it is, its key
// ("payout.Payout.Status"), its type ("payout.Status", or "string") and
// the values the tag lists.
type enumField struct {
	at     token.Position
	key    string
	typ    string
	values []string
}

func enumFields(fset *token.FileSet, files []*ast.File) []enumField {
	var out []enumField
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, field := range st.Fields.List {
				if field.Tag == nil || len(field.Names) == 0 {
					continue
				}
				tag, _ := strconv.Unquote(field.Tag.Value)
				enum, ok := reflect.StructTag(tag).Lookup("enum")
				if !ok {
					continue
				}
				out = append(out, enumField{at: fset.Position(field.Pos()), key: f.Name.Name + "." + ts.Name.Name + "." + field.Names[0].Name,
					typ: typeName(f.Name.Name, field.Type), values: strings.Split(enum, ",")})
			}
			return true
		})
	}
	return out
}

// typeName is "package.Type" of a member's type (pointers taken through),
// or "string".
func typeName(pkg string, e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	switch e := e.(type) {
	case *ast.Ident:
		if e.Name == "string" {
			return "string"
		}
		return pkg + "." + e.Name
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			return x.Name + "." + e.Sel.Name
		}
	}
	return "?"
}
