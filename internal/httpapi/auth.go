package httpapi

import (
	"net/http"

	"payd/internal/merchant"
)

type accessToken struct {
	AccessToken string `json:"access_token"`
	ExpiresIn   int    `json:"expires_in" doc:"Lifetime in seconds: 3600."`
	TokenType   string `json:"token_type" enum:"Bearer"`
}

func (a *API) authRoutes() []route {
	return []route{{
		method: "GET", path: "/v1/payment_gateways/access_token", auth: authKeysOnly,
		summary:     "Exchange app-id and secret-key for a short-lived access token.",
		description: "The token is accepted in the access-token header and as Authorization: Bearer on every other v1/v2 endpoint, for 3600 seconds on the merchant's clock. Revoking the app revokes its tokens.",
		response:    accessToken{}, status: 200,
		handle: a.issueToken,
	}}
}

func (a *API) issueToken(w http.ResponseWriter, r *http.Request) {
	token, err := a.Merchants.IssueToken(r.Context(), principal(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, accessToken{AccessToken: token, ExpiresIn: int(merchant.TokenLifetime.Seconds()), TokenType: "Bearer"})
}
