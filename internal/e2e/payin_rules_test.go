package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"payd/internal/ledger"
	"payd/internal/merchant"
)

// The helpers of the payin end-to-end tests start with pin, so they stay
// apart from those of other e2e files.

// pinParams returns payin_method_params that satisfy method: for the
// methods CONTRACT §4 names, exactly the set existing integrations send.
func pinParams(method string) map[string]any {
	switch method {
	case "vn_vietqr_vnd":
		return map[string]any{"ip_address": "203.0.113.7", "phone": "+84901234567"}
	case "kr_bank_krw":
		return map[string]any{"user_name": "Kim Minjun"}
	case "kr_bank_va_kyc_krw":
		return map[string]any{"user_name": "Kim Minjun", "phone": "+821012345678"}
	case "jp_bank_jpy":
		return map[string]any{"user_id": "user-77", "user_name": "yamada.taro", "ip_address": "203.0.113.8",
			"first_name": "タロウ", "last_name": "ヤマダ", "phone": "+819012345678", "email": "taro@example.jp"}
	case "th_qrpay_thb":
		return map[string]any{"first_name": "Somchai", "last_name": "Jaidee", "phone": "+66812345678", "bank_code": "KBANK"}
	case "au_payid_npp_aud", "ph_ewallet_gcash_php":
		return map[string]any{"callback_url": "https://shop.example/return"}
	case "ph_bank_maya_php":
		return map[string]any{"user_id": "user-9", "product_name": "Blue widget"}
	case "gh_mobile_money_ghs":
		return map[string]any{"phone": "+233241234567"}
	case "cm_mobile_money_xaf":
		return map[string]any{"phone": "+237612345678"}
	case "ci_mobile_money_xof":
		return map[string]any{"phone": "+2250701234567"}
	case "ug_bank_ugx":
		return map[string]any{"user_type": "individual", "first_name": "Amina", "last_name": "Nakato", "phone": "+256712345678"}
	}
	return map[string]any{}
}

// pinBody is a valid POST /v2/payins body for method.
func pinBody(currency, method string, amount any) map[string]any {
	return map[string]any{"currency": currency, "amount": amount, "payin_method_name": method,
		"payin_method_params": pinParams(method), "name": "Jane Payer", "email": "jane@example.com",
		"description": "order 42"}
}

// pinWith returns a copy of body with changes applied; a nil change removes the member.
func pinWith(body map[string]any, changes map[string]any) map[string]any {
	out := maps.Clone(body)
	for k, v := range changes {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

// pinWithParams returns body with payin_method_params changed (a nil value removes the member).
func pinWithParams(body map[string]any, changes map[string]any) map[string]any {
	params := maps.Clone(body["payin_method_params"].(map[string]any))
	for k, v := range changes {
		if v == nil {
			delete(params, k)
			continue
		}
		params[k] = v
	}
	return pinWith(body, map[string]any{"payin_method_params": params})
}

// pinCreate creates a payin and returns its record.
func pinCreate(t *testing.T, p *payd, as creds, body map[string]any) map[string]any {
	t.Helper()
	r := p.post("/v2/payins", as, body)
	want(t, r, 201)
	return r.JSON(t)
}

// pinDetail reads GET /v2/payins/detail.
func pinDetail(t *testing.T, p *payd, as creds, uuid string) map[string]any {
	t.Helper()
	r := p.get("/v2/payins/detail?uuid="+uuid, as)
	want(t, r, 200)
	return r.JSON(t)
}

// pinSimulate completes a pending payin as the sandbox rail and runs the clearing.
func pinSimulate(t *testing.T, p *payd, as creds, uuid string) {
	t.Helper()
	r := p.post("/v2/payins/simulate", as, map[string]any{"uuid": uuid, "status": "completed"})
	want(t, r, 200)
	if got := string(r.Body); got != "{\"status\":\"ok\"}\n" {
		t.Fatalf("simulate answered %q, want {\"status\":\"ok\"}", got)
	}
	p.runDue(as)
}

// pinEnable sets the methods enabled on as's account.
func pinEnable(t *testing.T, p *payd, as creds, methods ...string) {
	t.Helper()
	if _, err := p.srv.Merchants.UpdateAccount(context.Background(), as.MerchantID, as.Currency,
		merchant.AccountUpdate{Methods: &methods}); err != nil {
		t.Fatalf("enable %v: %v", methods, err)
	}
}

// pinMerchantIn makes a merchant of country and returns its apps by currency.
func pinMerchantIn(t *testing.T, p *payd, country, timezone string, currencies ...string) map[string]creds {
	t.Helper()
	c, err := p.srv.Merchants.Create(context.Background(), merchant.CreateParams{
		Name: "Merchant " + country, Country: country, Timezone: timezone, Currencies: currencies})
	if err != nil {
		t.Fatalf("create %s merchant: %v", country, err)
	}
	out := map[string]creds{}
	for _, a := range c.Accounts {
		out[a.Currency] = creds{MerchantID: c.MerchantID, Currency: a.Currency, AccountNumber: a.AccountNumber, AppID: a.AppID, SecretKey: a.SecretKey}
	}
	return out
}

// pinVerifyLedger fails the test if any ledger invariant is broken.
func pinVerifyLedger(t *testing.T, p *payd) {
	t.Helper()
	problems, err := ledger.Verify(context.Background(), p.srv.DB.Read())
	if err != nil {
		t.Fatalf("verify ledger: %v", err)
	}
	for _, pr := range problems {
		t.Errorf("ledger %s: %s", pr.Check, pr.Detail)
	}
}

// pinContact creates a contact with email through POST /v2/contacts, which
// the require_contact methods need.
func pinContact(t *testing.T, p *payd, as creds, email string) {
	t.Helper()
	r := p.post("/v2/contacts", as, map[string]any{"email": email, "first_name": "Jane", "last_name": "Payer", "type": "individual"})
	want(t, r, 201)
}

// pinFuture formats the merchant's clock plus d as a request time.
func pinFuture(t *testing.T, p *payd, as creds, d time.Duration) string {
	t.Helper()
	return p.clockNow(as).Add(d).UTC().Format(time.RFC3339Nano)
}

// pinMetadata returns n string pairs.
func pinMetadata(n int) map[string]any {
	out := map[string]any{}
	for i := range n {
		out[fmt.Sprintf("key%02d", i)] = "value"
	}
	return out
}

// pinMethodFields are the members of a payin method record (CONTRACT §4).
var pinMethodFields = []string{"payin_method_name", "currency", "description", "symbol", "min_amount", "max_amount",
	"is_refundable", "is_cancellable", "require_contact", "require_kyc", "payment_type"}

// pinRecordFields are the members of the payin record (CONTRACT §4); stage
// appears only when set.
var pinRecordFields = []string{"uuid", "name", "email", "external_id", "status", "status_text", "pay_code", "currency",
	"amount", "gst", "gst_amount", "total", "paid_amount", "payment_method", "payin_method_params", "description",
	"is_refundable", "expired_at", "pay_by", "webhook_notification", "metadata", "refund_information", "created_at", "updated_at"}

func pinKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

// pinMethodRecord finds method among the records of GET /v2/payins/payin_methods.
func pinMethodRecord(records []any, method string) map[string]any {
	for _, r := range records {
		if rec := r.(map[string]any); rec["payin_method_name"] == method {
			return rec
		}
	}
	return nil
}

// TestPayinMethodsListsContractFields: the AUD account lists
// au_payid_npp_aud with every member of the contract and the limits of the
// contract (20 to 10,000 AUD, contact required).
func TestPayinMethodsListsContractFields(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		r := p.get("/v2/payins/payin_methods", m)
		want(t, r, 200)
		records, _ := r.JSON(t)["records"].([]any)
		got := pinMethodRecord(records, "au_payid_npp_aud")
		if got == nil {
			t.Fatalf("au_payid_npp_aud not listed: %s", r.Body)
		}
		if keys, wantKeys := pinKeys(got), slices.Sorted(slices.Values(pinMethodFields)); !slices.Equal(keys, wantKeys) {
			t.Errorf("members = %v, want %v", keys, wantKeys)
		}
		wantValues := map[string]any{"payin_method_name": "au_payid_npp_aud", "currency": "AUD", "min_amount": "20.00",
			"max_amount": "10000.00", "is_refundable": true, "is_cancellable": true, "require_contact": true,
			"require_kyc": false, "payment_type": "pay_in"}
		for k, v := range wantValues {
			if got[k] != v {
				t.Errorf("%s = %#v, want %#v", k, got[k], v)
			}
		}
		for _, k := range []string{"description", "symbol"} {
			if s, _ := got[k].(string); s == "" {
				t.Errorf("%s = %#v, want a non-empty string", k, got[k])
			}
		}
		for _, rec := range records {
			if c := rec.(map[string]any)["currency"]; c != "AUD" {
				t.Errorf("the AUD app lists a method in %v: %v", c, rec)
			}
		}
	})
}

// TestPayinMethodsPerCurrency: each app lists the methods of its own
// currency, with their contact and KYC requirements.
func TestPayinMethodsPerCurrency(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		apps := p.merchant("KRW", "PHP", "IDR")
		tests := []struct {
			currency string
			want     map[string][2]bool // method → require_contact, require_kyc
		}{
			{"KRW", map[string][2]bool{"kr_bank_krw": {false, false}, "kr_bank_va_kyc_krw": {true, true}}},
			{"PHP", map[string][2]bool{"ph_bank_maya_php": {false, false}, "ph_ewallet_gcash_php": {false, false}}},
			{"IDR", map[string][2]bool{"id_bank_qris_idr": {false, false}}},
		}
		for _, tt := range tests {
			t.Run(tt.currency, func(t *testing.T) {
				r := p.get("/v2/payins/payin_methods", apps[tt.currency])
				want(t, r, 200)
				got := map[string][2]bool{}
				for _, rec := range r.JSON(t)["records"].([]any) {
					m := rec.(map[string]any)
					got[str(m, "payin_method_name")] = [2]bool{m["require_contact"] == true, m["require_kyc"] == true}
					if m["currency"] != tt.currency || m["payment_type"] != "pay_in" {
						t.Errorf("%v: currency %v payment_type %v", m["payin_method_name"], m["currency"], m["payment_type"])
					}
				}
				if !maps.Equal(got, tt.want) {
					t.Errorf("methods = %v, want %v", got, tt.want)
				}
			})
		}
	})
}

// TestPayinMethodsUGXOnlyWhenEnabled: ug_bank_ugx must be enabled per
// account (spec, Currency rules 3): a UGX account lists nothing until it is.
func TestPayinMethodsUGXOnlyWhenEnabled(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("UGX")["UGX"]
		r := p.get("/v2/payins/payin_methods", m)
		want(t, r, 200)
		if got := strings.TrimSpace(string(r.Body)); got != `{"records":[]}` {
			t.Errorf("before enabling: %s, want {\"records\":[]}", got)
		}
		wantError(t, p.get("/v2/payins/payin_method/params?payin_method_name=ug_bank_ugx", m), 422, "METHOD_NOT_ENABLED", "")

		pinEnable(t, p, m, "ug_bank_ugx")
		r = p.get("/v2/payins/payin_methods", m)
		want(t, r, 200)
		records := r.JSON(t)["records"].([]any)
		if len(records) != 1 {
			t.Fatalf("after enabling: %s, want ug_bank_ugx alone", r.Body)
		}
		got := records[0].(map[string]any)
		if got["payin_method_name"] != "ug_bank_ugx" || got["min_amount"] != "15000" || got["max_amount"] != "36000000" {
			t.Errorf("ug_bank_ugx = %v, want limits 15000 to 36000000", got)
		}
		want(t, p.get("/v2/payins/payin_method/params?payin_method_name=ug_bank_ugx", m), 200)
	})
}

// TestPayinMethodParams: GET /v2/payins/payin_method/params describes a
// method's fields as "<type>:<Mandatory|Optional> <label>" and refuses a
// method the account does not offer.
func TestPayinMethodParams(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		r := p.get("/v2/payins/payin_method/params?payin_method_name=au_payid_npp_aud", m)
		want(t, r, 200)
		rec, _ := r.JSON(t)["record"].(map[string]any)
		params, _ := rec["payin_method_params"].(map[string]any)
		if got := params["callback_url"]; got != "string:Mandatory callback URL" {
			t.Errorf("callback_url = %#v, want \"string:Mandatory callback URL\"", got)
		}
		for _, k := range pinMethodFields {
			if _, ok := rec[k]; !ok {
				t.Errorf("record lacks %s: %s", k, r.Body)
			}
		}

		tests := []struct {
			name  string
			query string
			code  string
			field string
		}{
			{"method of another currency", "?payin_method_name=id_bank_qris_idr", "METHOD_NOT_ENABLED", ""},
			{"unknown method", "?payin_method_name=xx_nothing_xxx", "METHOD_NOT_ENABLED", ""},
			{"payin_method_name missing", "", "VALIDATION_FAILED", "payin_method_name"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				wantError(t, p.get("/v2/payins/payin_method/params"+tt.query, m), 422, tt.code, tt.field)
			})
		}
	})
}

// pinApps is one merchant per role the rule tests need, by name: an AU
// merchant with every currency they use, the same with ug_bank_ugx enabled
// ("UGX+"), and a Singapore merchant in AUD ("SG-AUD").
func pinApps(t *testing.T, p *payd) map[string]creds {
	t.Helper()
	apps := p.merchant("AUD", "IDR", "VND", "KRW", "JPY", "THB", "PHP", "UGX", "GHS", "XAF", "XOF")
	apps["UGX+"] = p.merchant("UGX")["UGX"]
	pinEnable(t, p, apps["UGX+"], "ug_bank_ugx")
	apps["SG-AUD"] = pinMerchantIn(t, p, "SG", "Asia/Singapore", "AUD")["AUD"]
	return apps
}

// TestPayinCreateRefusals: every rule of POST /v2/payins (CONTRACT §3, §4)
// refused with its status, code and the member it names.
func TestPayinCreateRefusals(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		apps := pinApps(t, p)
		idr := pinBody("IDR", "id_bank_qris_idr", 100000)
		aud := pinBody("AUD", "au_payid_npp_aud", 100)
		ugx := pinBody("UGX", "ug_bank_ugx", 20000)
		jpy := pinBody("JPY", "jp_bank_jpy", 5000)
		gcash := pinBody("PHP", "ph_ewallet_gcash_php", 500)
		none := map[string]any{}
		pastExpiry := pinFuture(t, p, apps["IDR"], -time.Minute)
		farExpiry := pinFuture(t, p, apps["IDR"], 31*24*time.Hour)

		tests := []struct {
			name   string
			app    string
			body   map[string]any
			status int
			code   string
			fields []string
		}{
			{"currency not the app's", "AUD", pinWith(aud, map[string]any{"currency": "IDR", "payin_method_name": "id_bank_qris_idr"}), 422, "CURRENCY_NOT_SUPPORTED", nil},
			{"currency missing", "IDR", pinWith(idr, map[string]any{"currency": nil}), 422, "VALIDATION_FAILED", []string{"currency"}},
			{"unknown method", "IDR", pinWith(idr, map[string]any{"payin_method_name": "id_bank_nothing_idr"}), 422, "VALIDATION_FAILED", []string{"payin_method_name"}},
			{"method missing", "IDR", pinWith(idr, map[string]any{"payin_method_name": nil}), 422, "VALIDATION_FAILED", []string{"payin_method_name"}},
			{"method of another currency", "AUD", pinWith(aud, map[string]any{"payin_method_name": "id_bank_qris_idr"}), 422, "METHOD_NOT_ENABLED", nil},
			{"ug_bank_ugx not enabled on the account", "UGX", ugx, 422, "METHOD_NOT_ENABLED", nil},
			{"amount below the method's minimum (AUD 19.99)", "AUD", pinWith(aud, map[string]any{"amount": "19.99"}), 422, "AMOUNT_OUT_OF_RANGE", nil},
			{"amount above the method's maximum (AUD 10000.01)", "AUD", pinWith(aud, map[string]any{"amount": "10000.01"}), 422, "AMOUNT_OUT_OF_RANGE", nil},
			{"amount below the ug_bank_ugx minimum (UGX 14999)", "UGX+", pinWith(ugx, map[string]any{"amount": 14999}), 422, "AMOUNT_OUT_OF_RANGE", nil},
			{"amount above the ug_bank_ugx maximum (UGX 36000001)", "UGX+", pinWith(ugx, map[string]any{"amount": 36000001}), 422, "AMOUNT_OUT_OF_RANGE", nil},
			{"amount with more decimals than AUD has", "AUD", pinWith(aud, map[string]any{"amount": json.Number("100.005")}), 422, "VALIDATION_FAILED", []string{"amount"}},
			{"amount with more decimals than IDR has", "IDR", pinWith(idr, map[string]any{"amount": "100000.001"}), 422, "VALIDATION_FAILED", []string{"amount"}},
			{"amount zero", "IDR", pinWith(idr, map[string]any{"amount": 0}), 422, "VALIDATION_FAILED", []string{"amount"}},
			{"amount negative", "IDR", pinWith(idr, map[string]any{"amount": "-100000"}), 422, "VALIDATION_FAILED", []string{"amount"}},
			{"amount missing", "IDR", pinWith(idr, map[string]any{"amount": nil}), 422, "VALIDATION_FAILED", []string{"amount"}},
			{"gst for a merchant outside AU", "SG-AUD", pinWith(aud, map[string]any{"gst": true}), 422, "GST_NOT_ALLOWED", nil},
			{"gst in a currency other than AUD", "IDR", pinWith(idr, map[string]any{"gst": true}), 422, "GST_NOT_ALLOWED", nil},
			{"vn_vietqr_vnd mandatory params", "VND", pinWith(pinBody("VND", "vn_vietqr_vnd", 50000), map[string]any{"payin_method_params": none}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.ip_address", "payin_method_params.phone"}},
			{"kr_bank_krw mandatory params", "KRW", pinWith(pinBody("KRW", "kr_bank_krw", 50000), map[string]any{"payin_method_params": none}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.user_name"}},
			{"kr_bank_va_kyc_krw mandatory params", "KRW", pinWith(pinBody("KRW", "kr_bank_va_kyc_krw", 50000), map[string]any{"payin_method_params": none}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.user_name", "payin_method_params.phone"}},
			{"jp_bank_jpy mandatory params", "JPY", pinWith(jpy, map[string]any{"payin_method_params": none}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.user_id", "payin_method_params.user_name", "payin_method_params.ip_address", "payin_method_params.first_name",
					"payin_method_params.last_name", "payin_method_params.phone", "payin_method_params.email"}},
			{"th_qrpay_thb mandatory params", "THB", pinWith(pinBody("THB", "th_qrpay_thb", 1000), map[string]any{"payin_method_params": none}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.first_name", "payin_method_params.last_name", "payin_method_params.phone", "payin_method_params.bank_code"}},
			{"au_payid_npp_aud mandatory params", "AUD", pinWith(aud, map[string]any{"payin_method_params": none}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.callback_url"}},
			{"ph_ewallet_gcash_php mandatory params", "PHP", pinWith(gcash, map[string]any{"payin_method_params": none}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.callback_url"}},
			{"gh_mobile_money_ghs mandatory params", "GHS", pinWith(pinBody("GHS", "gh_mobile_money_ghs", 100), map[string]any{"payin_method_params": none}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.phone"}},
			{"ug_bank_ugx user_type missing", "UGX+", pinWith(ugx, map[string]any{"payin_method_params": none}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.user_type"}},
			{"ug_bank_ugx user_type not individual or business", "UGX+", pinWithParams(ugx, map[string]any{"user_type": "company"}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.user_type"}},
			{"ug_bank_ugx individual needs first_name, last_name, phone", "UGX+", pinWith(ugx, map[string]any{"payin_method_params": map[string]any{"user_type": "individual"}}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.first_name", "payin_method_params.last_name", "payin_method_params.phone"}},
			{"ug_bank_ugx business needs business_name, registration_number", "UGX+", pinWith(ugx, map[string]any{"payin_method_params": map[string]any{"user_type": "business", "first_name": "Amina"}}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.business_name", "payin_method_params.registration_number"}},
			{"jp_bank_jpy names not katakana", "JPY", pinWithParams(jpy, map[string]any{"first_name": "Taro", "last_name": "山田"}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.first_name", "payin_method_params.last_name"}},
			{"callback_url not a URL", "PHP", pinWithParams(gcash, map[string]any{"callback_url": "shop.example/return"}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.callback_url"}},
			{"callback_url not http(s)", "PHP", pinWithParams(gcash, map[string]any{"callback_url": "javascript:alert(1)"}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.callback_url"}},
			{"failure_callback_url not a URL", "PHP", pinWithParams(gcash, map[string]any{"failure_callback_url": "nope"}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.failure_callback_url"}},
			{"vn_vietqr_vnd ip_address not an IP", "VND", pinWithParams(pinBody("VND", "vn_vietqr_vnd", 50000), map[string]any{"ip_address": "999.1.1.1"}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.ip_address"}},
			{"vn_vietqr_vnd transliterate not a boolean", "VND", pinWithParams(pinBody("VND", "vn_vietqr_vnd", 50000), map[string]any{"transliterate": "yes"}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.transliterate"}},
			{"mandatory param of the wrong type", "GHS", pinWithParams(pinBody("GHS", "gh_mobile_money_ghs", 100), map[string]any{"phone": 233241234567}), 422, "VALIDATION_FAILED",
				[]string{"payin_method_params.phone"}},
			{"email not an email", "IDR", pinWith(idr, map[string]any{"email": "not-an-email"}), 422, "VALIDATION_FAILED", []string{"email"}},
			{"webhook endpoint_url not a URL", "IDR", pinWith(idr, map[string]any{"webhook_notification": map[string]any{"endpoint_url": "not a url", "authorization_header": "Basic x"}}), 422, "VALIDATION_FAILED",
				[]string{"webhook_notification.endpoint_url"}},
			{"webhook authorization_header without endpoint_url", "IDR", pinWith(idr, map[string]any{"webhook_notification": map[string]any{"authorization_header": "Basic x"}}), 422, "VALIDATION_FAILED",
				[]string{"webhook_notification.endpoint_url"}},
			{"expired_at in the past", "IDR", pinWith(idr, map[string]any{"expired_at": pastExpiry}), 422, "VALIDATION_FAILED", []string{"expired_at"}},
			{"expired_at beyond 30 days", "IDR", pinWith(idr, map[string]any{"expired_at": farExpiry}), 422, "VALIDATION_FAILED", []string{"expired_at"}},
			{"metadata with 51 keys", "IDR", pinWith(idr, map[string]any{"metadata": pinMetadata(51)}), 422, "VALIDATION_FAILED", []string{"metadata"}},
			{"metadata key longer than 40", "IDR", pinWith(idr, map[string]any{"metadata": map[string]any{strings.Repeat("k", 41): "v"}}), 422, "VALIDATION_FAILED", []string{"metadata"}},
			{"external_id longer than 100", "IDR", pinWith(idr, map[string]any{"external_id": strings.Repeat("x", 101)}), 422, "VALIDATION_FAILED", []string{"external_id"}},
			{"au_payid_npp_aud without email (require_contact)", "AUD", pinWith(aud, map[string]any{"email": nil}), 422, "VALIDATION_FAILED", []string{"email"}},
			{"au_payid_npp_aud without a contact (require_contact)", "AUD", aud, 422, "CONTACT_REQUIRED", nil},
			{"kr_bank_va_kyc_krw without a contact (require_contact)", "KRW", pinBody("KRW", "kr_bank_va_kyc_krw", 50000), 422, "CONTACT_REQUIRED", nil},
			{"gst not a boolean", "AUD", pinWith(aud, map[string]any{"gst": "yes"}), 400, "WRONG_TYPE", []string{"gst"}},
			{"payin_method_params not an object", "IDR", pinWith(idr, map[string]any{"payin_method_params": "x"}), 400, "WRONG_TYPE", []string{"payin_method_params"}},
			{"amount not a number", "IDR", pinWith(idr, map[string]any{"amount": true}), 400, "WRONG_TYPE", []string{"amount"}},
			{"currency not a string", "IDR", pinWith(idr, map[string]any{"currency": 360}), 400, "WRONG_TYPE", []string{"currency"}},
			{"metadata not an object", "IDR", pinWith(idr, map[string]any{"metadata": []any{"a"}}), 400, "WRONG_TYPE", []string{"metadata"}},
			{"webhook_notification not an object", "IDR", pinWith(idr, map[string]any{"webhook_notification": "https://shop.example/hook"}), 400, "WRONG_TYPE", []string{"webhook_notification"}},
			{"expired_at not a time", "IDR", pinWith(idr, map[string]any{"expired_at": 1700000000}), 400, "WRONG_TYPE", []string{"expired_at"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := p.post("/v2/payins", apps[tt.app], tt.body)
				wantError(t, r, tt.status, tt.code, "")
				fields := r.Fields(t)
				for _, f := range tt.fields {
					if _, ok := fields[f]; !ok {
						t.Errorf("errors.fields does not name %s: %s", f, r.Body)
					}
				}
			})
		}
		// Nothing refused was created.
		for name, as := range apps {
			r := p.get("/v2/payins/all", as)
			want(t, r, 200)
			if total := r.JSON(t)["total"]; fmt.Sprint(total) != "0" {
				t.Errorf("%s: %v payins after refused requests, want 0", name, total)
			}
		}
	})
}

// TestPayinCreateAccepts: amounts at the limits, the rounding currencies
// (the response carries the recorded amount) and each parameter set that
// existing integrations send, alone.
func TestPayinCreateAccepts(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		apps := pinApps(t, p)
		ugx := pinBody("UGX", "ug_bank_ugx", 20000)
		idr := pinBody("IDR", "id_bank_qris_idr", 100000)
		tests := []struct {
			name   string
			app    string
			body   map[string]any
			amount string
		}{
			{"ug_bank_ugx minimum 15000", "UGX+", pinWith(ugx, map[string]any{"amount": 15000}), "15000"},
			{"ug_bank_ugx maximum 36000000", "UGX+", pinWith(ugx, map[string]any{"amount": "36000000"}), "36000000"},
			{"ug_bank_ugx business", "UGX+", pinWith(ugx, map[string]any{"payin_method_params": map[string]any{
				"user_type": "business", "business_name": "Kampala Traders Ltd", "registration_number": "80020001234567"}}), "20000"},
			{"VND 10000.5 rounds half away from zero", "VND", pinBody("VND", "vn_vietqr_vnd", json.Number("10000.5")), "10001"},
			{"VND as a decimal string", "VND", pinBody("VND", "vn_vietqr_vnd", "10000.5"), "10001"},
			{"KRW 1000.4 rounds down", "KRW", pinBody("KRW", "kr_bank_krw", json.Number("1000.4")), "1000"},
			{"JPY 100.5 rounds up", "JPY", pinBody("JPY", "jp_bank_jpy", json.Number("100.5")), "101"},
			{"XAF 100.5 rounds up", "XAF", pinBody("XAF", "cm_mobile_money_xaf", json.Number("100.5")), "101"},
			{"XOF 250.49 rounds down", "XOF", pinBody("XOF", "ci_mobile_money_xof", "250.49"), "250"},
			{"id_bank_qris_idr with {}", "IDR", idr, "100000.00"},
			{"id_bank_qris_idr without payin_method_params", "IDR", pinWith(idr, map[string]any{"payin_method_params": nil}), "100000.00"},
			{"vn_vietqr_vnd with ip_address and phone", "VND", pinBody("VND", "vn_vietqr_vnd", 50000), "50000"},
			{"vn_vietqr_vnd with transliterate", "VND", pinWithParams(pinBody("VND", "vn_vietqr_vnd", 50000), map[string]any{"transliterate": true}), "50000"},
			{"kr_bank_krw with user_name", "KRW", pinBody("KRW", "kr_bank_krw", 50000), "50000"},
			{"jp_bank_jpy with the katakana set", "JPY", pinBody("JPY", "jp_bank_jpy", 5000), "5000"},
			{"jp_bank_jpy with half-width katakana", "JPY", pinWithParams(pinBody("JPY", "jp_bank_jpy", 5000), map[string]any{"first_name": "ﾀﾛｳ", "last_name": "ﾔﾏﾀﾞ"}), "5000"},
			{"th_qrpay_thb with the new mandatory set", "THB", pinBody("THB", "th_qrpay_thb", 1000), "1000.00"},
			{"ph_bank_maya_php with only user_id and product_name", "PHP", pinBody("PHP", "ph_bank_maya_php", 500), "500.00"},
			{"ph_bank_maya_php with {}", "PHP", pinWith(pinBody("PHP", "ph_bank_maya_php", 500), map[string]any{"payin_method_params": map[string]any{}}), "500.00"},
			{"ph_ewallet_gcash_php with failure_callback_url", "PHP", pinWithParams(pinBody("PHP", "ph_ewallet_gcash_php", 500), map[string]any{"failure_callback_url": "https://shop.example/failed"}), "500.00"},
			{"unknown params are kept", "IDR", pinWithParams(idr, map[string]any{"customer_ref": "c-1"}), "100000.00"},
			{"unknown body members are ignored", "IDR", pinWith(idr, map[string]any{"payment_url": "https://x.example", "foo": []any{1}}), "100000.00"},
			{"metadata with 50 keys", "IDR", pinWith(idr, map[string]any{"metadata": pinMetadata(50)}), "100000.00"},
			{"expired_at 29 days ahead", "IDR", pinWith(idr, map[string]any{"expired_at": pinFuture(t, p, apps["IDR"], 29*24*time.Hour)}), "100000.00"},
			{"expired_at without an offset (UTC)", "IDR", pinWith(idr, map[string]any{"expired_at": p.clockNow(apps["IDR"]).UTC().Add(48 * time.Hour).Format("2006-01-02T15:04:05")}), "100000.00"},
			{"expired_at with an offset without colon", "IDR", pinWith(idr, map[string]any{"expired_at": p.clockNow(apps["IDR"]).Add(48 * time.Hour).Format("2006-01-02T15:04:05.000-0700")}), "100000.00"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got := pinCreate(t, p, apps[tt.app], tt.body)
				if got["amount"] != tt.amount || got["total"] != tt.amount || got["status"] != "pending" {
					t.Errorf("amount %v, total %v, status %v; want %s, %s, pending", got["amount"], got["total"], got["status"], tt.amount, tt.amount)
				}
				if got["payment_method"] != tt.body["payin_method_name"] || got["currency"] != tt.body["currency"] {
					t.Errorf("payment_method %v currency %v, want %v %v", got["payment_method"], got["currency"], tt.body["payin_method_name"], tt.body["currency"])
				}
				detail := pinDetail(t, p, apps[tt.app], str(got, "uuid"))
				if detail["amount"] != tt.amount {
					t.Errorf("detail amount = %v, want the recorded %s", detail["amount"], tt.amount)
				}
			})
		}
	})
}

// TestPayinRecordHasContractFields: the created record carries every member
// of CONTRACT §4, echoes what was sent and never returns payment_url.
func TestPayinRecordHasContractFields(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("THB")["THB"]
		body := pinWith(pinBody("THB", "th_qrpay_thb", "1234.50"), map[string]any{"external_id": "ext-7",
			"webhook_notification": map[string]any{"endpoint_url": "https://shop.example/hooks", "authorization_header": "Basic c2hvcDpzZWNyZXQ="},
			"metadata":             map[string]any{"order": "42", "channel": "web"}})
		got := pinCreate(t, p, m, body)
		if keys, wantKeys := pinKeys(got), slices.Sorted(slices.Values(pinRecordFields)); !slices.Equal(keys, wantKeys) {
			t.Errorf("members = %v\nwant      %v", keys, wantKeys)
		}
		wantValues := map[string]any{"name": "Jane Payer", "email": "jane@example.com", "external_id": "ext-7", "status": "pending",
			"currency": "THB", "amount": "1234.50", "gst": false, "gst_amount": json.Number("0.00"), "total": "1234.50", "paid_amount": "0.00",
			"payment_method": "th_qrpay_thb", "description": "order 42", "is_refundable": true, "pay_by": "qr"}
		for k, v := range wantValues {
			if got[k] != v {
				t.Errorf("%s = %#v, want %#v", k, got[k], v)
			}
		}
		if !maps.Equal(got["payin_method_params"].(map[string]any), body["payin_method_params"].(map[string]any)) {
			t.Errorf("payin_method_params = %v, want %v", got["payin_method_params"], body["payin_method_params"])
		}
		if got["metadata"].(map[string]any)["order"] != "42" {
			t.Errorf("metadata = %v", got["metadata"])
		}
		hook := got["webhook_notification"].(map[string]any)
		if hook["endpoint_url"] != "https://shop.example/hooks" || hook["authorization_header"] != "Basic c2hvcDpzZWNyZXQ=" {
			t.Errorf("webhook_notification = %v", hook)
		}
		ri := got["refund_information"].(map[string]any)
		if ri["total_amount"] != "0.00" || ri["refund_amount"] != "0.00" {
			t.Errorf("refund_information = %v", ri)
		}
		if len(str(got, "uuid")) != 8 || strings.ToUpper(str(got, "uuid")) != str(got, "uuid") {
			t.Errorf("uuid = %q, want 8 upper-case base-36 characters", got["uuid"])
		}
		created, err := time.Parse(time.RFC3339Nano, str(got, "created_at"))
		if err != nil || !strings.HasSuffix(str(got, "created_at"), "Z") {
			t.Fatalf("created_at = %q, want RFC 3339 UTC", got["created_at"])
		}
		expires, err := time.Parse(time.RFC3339Nano, str(got, "expired_at"))
		if err != nil || expires.Sub(created) != 24*time.Hour {
			t.Errorf("expired_at = %v, want created_at + 24 h by default", got["expired_at"])
		}
		if _, ok := got["pay_code"].(map[string]any)["payment_url"]; ok {
			t.Errorf("pay_code carries payment_url, which is never returned: %v", got["pay_code"])
		}
		if _, ok := got["pay_code"].(map[string]any)["qr_string"]; !ok {
			t.Errorf("th_qrpay_thb pay_code has no qr_string: %v", got["pay_code"])
		}
	})
}

// TestPayinGSTAddsTenPercent: an AU merchant in AUD may set gst; then
// gst_amount is 10 % of amount and total = amount + GST. The only AUD
// method needs a contact.
func TestPayinGSTAddsTenPercent(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		pinContact(t, p, m, "jane@example.com")
		tests := []struct {
			name             string
			amount           any
			gst              bool
			gstAmount, total string
		}{
			{"gst on 100", 100, true, "10.00", "110.00"},
			{"gst on 20.05 rounds half away from zero", "20.05", true, "2.01", "22.06"},
			{"gst off", 100, false, "0.00", "100.00"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got := pinCreate(t, p, m, pinWith(pinBody("AUD", "au_payid_npp_aud", tt.amount), map[string]any{"gst": tt.gst}))
				if got["gst"] != tt.gst || got["gst_amount"] != json.Number(tt.gstAmount) || got["total"] != tt.total {
					t.Errorf("gst %v gst_amount %v total %v, want %v %s %s", got["gst"], got["gst_amount"], got["total"], tt.gst, tt.gstAmount, tt.total)
				}
			})
		}
	})
}

// TestPayinActionRefusals: the rules of detail, simulate, cancel, refund and
// confirm_otp, each refused with its status, code and member, and nothing
// changes.
func TestPayinActionRefusals(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("IDR")["IDR"]
		pending := str(pinCreate(t, p, m, pinBody("IDR", "id_bank_qris_idr", 100000)), "uuid")
		received := pinReceived(t, p, m, nil, "")
		tests := []struct {
			name, method, path string
			body               any
			status             int
			code, field        string
		}{
			{"detail without uuid", "GET", "/v2/payins/detail", nil, 422, "VALIDATION_FAILED", "uuid"},
			{"detail of an unknown uuid", "GET", "/v2/payins/detail?uuid=ZZZZZZZZ", nil, 404, "NOT_FOUND", ""},
			{"simulate without uuid", "POST", "/v2/payins/simulate", map[string]any{"status": "completed"}, 422, "VALIDATION_FAILED", "uuid"},
			{"simulate with an unknown status", "POST", "/v2/payins/simulate", map[string]any{"uuid": pending, "status": "paid"}, 422, "VALIDATION_FAILED", "status"},
			{"simulate with a bad amount", "POST", "/v2/payins/simulate", map[string]any{"uuid": pending, "status": "completed", "amount": "abc"}, 422, "VALIDATION_FAILED", "amount"},
			{"simulate with too many decimals", "POST", "/v2/payins/simulate", map[string]any{"uuid": pending, "status": "completed", "amount": "1.001"}, 422, "VALIDATION_FAILED", "amount"},
			{"simulate an unknown uuid", "POST", "/v2/payins/simulate", map[string]any{"uuid": "ZZZZZZZZ", "status": "completed"}, 404, "NOT_FOUND", ""},
			{"simulate a received payin", "POST", "/v2/payins/simulate", map[string]any{"uuid": received, "status": "failed"}, 409, "INVALID_STATE", ""},
			{"cancel without uuid", "POST", "/v2/payins/cancel", map[string]any{}, 422, "VALIDATION_FAILED", "uuid"},
			{"cancel an unknown uuid", "POST", "/v2/payins/cancel", map[string]any{"uuid": "ZZZZZZZZ"}, 404, "NOT_FOUND", ""},
			{"cancel a received payin", "POST", "/v2/payins/cancel", map[string]any{"uuid": received}, 409, "INVALID_STATE", ""},
			{"refund without uuid", "POST", "/v2/payins/refund", map[string]any{"description": "money back"}, 422, "VALIDATION_FAILED", "uuid"},
			{"refund without description", "POST", "/v2/payins/refund", map[string]any{"uuid": received}, 422, "VALIDATION_FAILED", "description"},
			{"refund description under 5 characters", "POST", "/v2/payins/refund", map[string]any{"uuid": received, "description": " abc "}, 422, "VALIDATION_FAILED", "description"},
			{"refund amount zero", "POST", "/v2/payins/refund", map[string]any{"uuid": received, "amount": 0, "description": "money back"}, 422, "VALIDATION_FAILED", "amount"},
			{"refund amount with too many decimals", "POST", "/v2/payins/refund", map[string]any{"uuid": received, "amount": "1.001", "description": "money back"}, 422, "VALIDATION_FAILED", "amount"},
			{"refund more than was paid", "POST", "/v2/payins/refund", map[string]any{"uuid": received, "amount": "100000.01", "description": "money back"}, 422, "AMOUNT_OUT_OF_RANGE", ""},
			{"refund amount not a number", "POST", "/v2/payins/refund", map[string]any{"uuid": received, "amount": true, "description": "money back"}, 400, "WRONG_TYPE", "amount"},
			{"refund an unknown uuid", "POST", "/v2/payins/refund", map[string]any{"uuid": "ZZZZZZZZ", "description": "money back"}, 404, "NOT_FOUND", ""},
			{"refund a pending payin", "POST", "/v2/payins/refund", map[string]any{"uuid": pending, "description": "money back"}, 409, "INVALID_STATE", ""},
			{"confirm_otp of a payin without OTP", "POST", "/v2/payins/bank/confirm_otp", map[string]any{"uuid": pending, "code": "123456"}, 400, "OTP_INVALID", ""},
			{"confirm_otp without uuid", "POST", "/v2/payins/bank/confirm_otp", map[string]any{"code": "123456"}, 400, "VALIDATION_FAILED", "uuid"},
			{"create with a body that is not JSON", "POST", "/v2/payins", "{not json", 400, "MALFORMED_JSON", ""},
			{"create with two JSON objects", "POST", "/v2/payins", "{}{}", 400, "MALFORMED_JSON", ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				wantError(t, p.do(req{method: tt.method, path: tt.path, as: &m, body: tt.body}), tt.status, tt.code, tt.field)
			})
		}
		t.Run("create as text/plain", func(t *testing.T) {
			r := p.do(req{method: "POST", path: "/v2/payins", as: &m, body: pinBody("IDR", "id_bank_qris_idr", 100000), header: map[string]string{"Content-Type": "text/plain"}})
			want(t, r, 415)
		})
		if got := str(pinDetail(t, p, m, pending), "status"); got != "pending" {
			t.Errorf("pending payin is now %s", got)
		}
		if got := pinDetail(t, p, m, received); got["status"] != "received" || pinMap(got, "refund_information")["refund_amount"] != "0.00" {
			t.Errorf("received payin is now %v with refund_information %v", got["status"], got["refund_information"])
		}
		wantPinBalance(t, p, m, pinMoney{Available: 10000000 - 70000})
		pinVerifyLedger(t, p)
	})
}
