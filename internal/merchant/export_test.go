package merchant

import "time"

// SetPrincipalCacheClock makes s's principal cache measure its entries'
// lifetimes on now.
func SetPrincipalCacheClock(s *Service, now func() time.Time) { s.principals.now = now }
