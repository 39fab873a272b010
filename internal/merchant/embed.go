package merchant

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"payd/internal/fault"
	"payd/internal/store"
)

// MaxEmbedOrigins bounds a merchant's list of embedding origins.
const MaxEmbedOrigins = 20

// originHost is the host[:port] of an origin, in the characters a
// Content-Security-Policy source may carry unquoted.
var originHost = regexp.MustCompile(`^[a-z0-9.\-]+(:[0-9]{1,5})?$`)

// CheckOrigin returns raw as an origin (scheme://host[:port], lower case),
// or says what is wrong with it. An origin has no path (but "/"), query,
// fragment or credentials: it names a site that may frame payd's Payment
// Gateway 3 pages (CONTRACT §11), and a browser compares it exactly.
func CheckOrigin(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("%q is not an origin such as https://shop.example", raw)
	}
	host := strings.ToLower(u.Host)
	if !originHost.MatchString(host) {
		return "", fmt.Errorf("%q has a host that is not a domain name or address", raw)
	}
	return strings.ToLower(u.Scheme) + "://" + host, nil
}

// checkOrigins validates and normalises a list of origins, dropping repeats.
func checkOrigins(raw []string) ([]string, error) {
	out := []string{}
	seen := map[string]bool{}
	for _, r := range raw {
		if strings.TrimSpace(r) == "" {
			continue
		}
		o, err := CheckOrigin(r)
		if err != nil {
			return nil, fault.Field("embed_origins", err.Error())
		}
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	if len(out) > MaxEmbedOrigins {
		return nil, fault.Field("embed_origins", fmt.Sprintf("lists %d origins; at most %d are allowed", len(out), MaxEmbedOrigins))
	}
	return out, nil
}

// EmbedOrigins returns the origins merchantID lets frame its Payment
// Gateway 3 pages, besides each link's own redirect_url.success.
func EmbedOrigins(ctx context.Context, q store.Querier, merchantID string) ([]string, error) {
	var list string
	err := q.QueryRowContext(ctx, `SELECT embed_origins FROM merchants WHERE id = $1`, merchantID).Scan(&list)
	if isNoRows(err) {
		return nil, fault.NotFoundf("no merchant %s", merchantID)
	}
	if err != nil {
		return nil, fmt.Errorf("embed origins of %s: %w", merchantID, err)
	}
	return splitMethods(list), nil
}

// SetEmbedOrigins replaces merchantID's embedding origins (payd merchant
// update --embed-origins) in a transaction of its own, as WriteEmbedOrigins
// does.
func (s *Service) SetEmbedOrigins(ctx context.Context, merchantID string, origins []string) ([]string, error) {
	var list []string
	err := s.db.Exec(ctx, func(tx *store.Tx) (err error) {
		list, err = WriteEmbedOrigins(ctx, tx, merchantID, origins)
		return err
	})
	return list, err
}

// WriteEmbedOrigins replaces merchantID's embedding origins in tx (the
// portal's developers page, with its audit entry) and returns them as
// stored: normalised, without repeats. An empty list allows only each
// link's own success origin.
func WriteEmbedOrigins(ctx context.Context, tx *store.Tx, merchantID string, origins []string) ([]string, error) {
	list, err := checkOrigins(origins)
	if err != nil {
		return nil, err
	}
	ok, err := store.OneRow(tx.ExecContext(ctx, `UPDATE merchants SET embed_origins = $1 WHERE id = $2`, strings.Join(list, ","), merchantID))
	if err == nil && !ok {
		return nil, fault.NotFoundf("no merchant %s", merchantID)
	}
	if err != nil {
		return nil, fmt.Errorf("set embed origins of %s: %w", merchantID, err)
	}
	return list, nil
}
