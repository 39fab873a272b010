package param

import (
	"fmt"
	"iter"
	"slices"
)

// Catalogue is a list of methods (payin's, payout's) indexed by code: the
// one place such a list is checked and looked up.
type Catalogue[M any] struct {
	kind    string
	methods []M
	byCode  map[string]M
}

// NewCatalogue indexes methods, once, at start. prepare is called on each
// method in turn and returns its code; it fills in what the method derives
// from its definition (its currency, by money.MustLookup). Kind names the
// catalogue in its errors ("payout"). A code listed twice panics: the
// catalogue is a table in the source, and a method defined twice is a bug.
func NewCatalogue[M any](kind string, methods []M, prepare func(m *M) (code string)) *Catalogue[M] {
	c := &Catalogue[M]{kind: kind, methods: methods, byCode: make(map[string]M, len(methods))}
	for i := range methods {
		code := prepare(&methods[i])
		if _, dup := c.byCode[code]; dup {
			panic(fmt.Sprintf("%s catalogue: %s twice", kind, code))
		}
		c.byCode[code] = methods[i]
	}
	return c
}

// Lookup finds a method by its code. A code that is not in the catalogue is
// an error that names it.
func (c *Catalogue[M]) Lookup(code string) (M, error) {
	m, ok := c.byCode[code]
	if !ok {
		return m, fmt.Errorf("%q is not a %s method", code, c.kind)
	}
	return m, nil
}

// Has reports whether code is one of the catalogue's methods.
func (c *Catalogue[M]) Has(code string) bool {
	_, ok := c.byCode[code]
	return ok
}

// All is every method, in the catalogue's order.
func (c *Catalogue[M]) All() iter.Seq[M] { return slices.Values(c.methods) }
