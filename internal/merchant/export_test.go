package merchant

import "payd/internal/clock"

// SetPrincipalCacheClock makes s's principal cache measure its entries'
// lifetimes on machine.
func SetPrincipalCacheClock(s *Service, machine clock.Clock) { s.principals.machine = machine }
