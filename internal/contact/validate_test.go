package contact

import (
	"strings"
	"testing"
	"time"
)

var today = time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)

func validContact() Contact {
	return Contact{Email: "jane@example.com", FirstName: "Jane", LastName: "Doe"}
}

// TestContactValidate: each rule of the spec's Contact table names the
// member that breaks it.
func TestContactValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(c *Contact)
		field  string // the member named; "" for a valid contact
	}{
		{name: "minimal", change: func(c *Contact) {}},
		{name: "everything", change: func(c *Contact) {
			*c = Contact{Email: "Jane.Doe+x@Example.co.uk", FirstName: "Jane", LastName: "Doe", Type: Organization, DOB: "1990-02-28",
				RegNo: "ABN 51 824 753 556", Phone: "+61 (4) 1234-5678", Gender: "female", Street: "1 George St", City: "Sydney",
				PostalCode: "2000", State: "NSW", Country: "au"}
		}},
		{name: "dob today", change: func(c *Contact) { c.DOB = "2025-03-10" }},
		{name: "no email", change: func(c *Contact) { c.Email = " " }, field: "email"},
		{name: "email with a name", change: func(c *Contact) { c.Email = "Jane <jane@example.com>" }, field: "email"},
		{name: "email without a dotted domain", change: func(c *Contact) { c.Email = "jane@localhost" }, field: "email"},
		{name: "email too long", change: func(c *Contact) { c.Email = strings.Repeat("a", 60) + "@" + strings.Repeat("b", 190) + ".com" }, field: "email"},
		{name: "no first name", change: func(c *Contact) { c.FirstName = "" }, field: "first_name"},
		{name: "no last name", change: func(c *Contact) { c.LastName = "" }, field: "last_name"},
		{name: "first name too long", change: func(c *Contact) { c.FirstName = strings.Repeat("é", 101) }, field: "first_name"},
		{name: "line break in a name", change: func(c *Contact) { c.LastName = "Doe\nEvil" }, field: "last_name"},
		{name: "unknown type", change: func(c *Contact) { c.Type = "company" }, field: "type"},
		{name: "organization without reg_no", change: func(c *Contact) { c.Type = Organization }, field: "reg_no"},
		{name: "dob not a date", change: func(c *Contact) { c.DOB = "1990-02-30" }, field: "dob"},
		{name: "dob in another form", change: func(c *Contact) { c.DOB = "28/02/1990" }, field: "dob"},
		{name: "dob in the future", change: func(c *Contact) { c.DOB = "2025-03-11" }, field: "dob"},
		{name: "dob before 1900", change: func(c *Contact) { c.DOB = "1899-12-31" }, field: "dob"},
		{name: "phone with letters", change: func(c *Contact) { c.Phone = "+61 4 CALL ME" }, field: "phone"},
		{name: "phone too short", change: func(c *Contact) { c.Phone = "12345" }, field: "phone"},
		{name: "phone too long", change: func(c *Contact) { c.Phone = "+1234567890123456" }, field: "phone"},
		{name: "gender", change: func(c *Contact) { c.Gender = "other" }, field: "gender"},
		{name: "street too long", change: func(c *Contact) { c.Street = strings.Repeat("x", 201) }, field: "street"},
		{name: "postal code with symbols", change: func(c *Contact) { c.PostalCode = "20<00>" }, field: "postal_code"},
		{name: "state too long", change: func(c *Contact) { c.State = strings.Repeat("x", 101) }, field: "state"},
		{name: "country of three letters", change: func(c *Contact) { c.Country = "AUS" }, field: "country"},
		{name: "country not assigned", change: func(c *Contact) { c.Country = "XK" }, field: "country"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validContact()
			tt.change(&c)
			got := fieldOf(c.validate(today))
			if got != tt.field {
				t.Errorf("validate names %q, want %q", got, tt.field)
			}
		})
	}
}

// TestContactValidateNormalises: members are trimmed, the type defaults to
// individual and the country is kept upper case.
func TestContactValidateNormalises(t *testing.T) {
	t.Parallel()
	c := Contact{Email: "  jane@example.com ", FirstName: " Jane", LastName: "Doe ", Country: "nz"}
	if err := c.validate(today); err != nil {
		t.Fatal(err)
	}
	want := Contact{Email: "jane@example.com", FirstName: "Jane", LastName: "Doe", Type: Individual, Country: "NZ"}
	if c != want {
		t.Errorf("got %+v, want %+v", c, want)
	}
}

// TestContactChangesApply: only the members present change; an empty
// string clears.
func TestContactChangesApply(t *testing.T) {
	t.Parallel()
	c := Contact{Email: "jane@example.com", FirstName: "Jane", LastName: "Doe", City: "Sydney", Phone: "+61412345678"}
	city, phone := "Melbourne", ""
	ContactChanges{Email: "other@example.com", City: &city, Phone: &phone}.apply(&c)
	want := Contact{Email: "jane@example.com", FirstName: "Jane", LastName: "Doe", City: "Melbourne"}
	if c != want {
		t.Errorf("got %+v, want %+v", c, want)
	}
}

func TestCountries(t *testing.T) {
	t.Parallel()
	if got := len(countries); got != 249 {
		t.Errorf("%d ISO 3166-1 alpha-2 codes, want 249", got)
	}
	for code, want := range map[string]bool{"AU": true, "VN": true, "GB": true, "SS": true, "UK": false, "EU": false, "au": false, "": false} {
		if got := IsCountry(code); got != want {
			t.Errorf("IsCountry(%q) = %v, want %v", code, got, want)
		}
	}
}

func TestCustomerValidate(t *testing.T) {
	t.Parallel()
	valid := func() Customer {
		return Customer{FirstName: "Jane", LastName: "Doe", Email: "jane@example.com"}
	}
	tests := []struct {
		name   string
		change func(c *Customer)
		field  string
	}{
		{name: "minimal", change: func(c *Customer) {}},
		{name: "metadata", change: func(c *Customer) { c.Metadata = map[string]string{"tier": "gold", "crm": strings.Repeat("x", 500)} }},
		{name: "no email", change: func(c *Customer) { c.Email = "" }, field: "email"},
		{name: "bad email", change: func(c *Customer) { c.Email = "jane" }, field: "email"},
		{name: "no first name", change: func(c *Customer) { c.FirstName = "" }, field: "first_name"},
		{name: "external id too long", change: func(c *Customer) { c.ExternalID = strings.Repeat("x", 65) }, field: "external_id"},
		{name: "country", change: func(c *Customer) { c.Country = "ZZ" }, field: "country"},
		{name: "metadata value too long", change: func(c *Customer) { c.Metadata = map[string]string{"note": strings.Repeat("x", 501)} }, field: "metadata.note"},
		{name: "metadata empty key", change: func(c *Customer) { c.Metadata = map[string]string{"": "x"} }, field: "metadata"},
		{name: "metadata too many keys", change: func(c *Customer) {
			c.Metadata = map[string]string{}
			for i := range 51 {
				c.Metadata[strings.Repeat("k", i+1)] = "v"
			}
		}, field: "metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.change(&c)
			if got := fieldOf(c.validate()); got != tt.field {
				t.Errorf("validate names %q, want %q", got, tt.field)
			}
		})
	}
}
