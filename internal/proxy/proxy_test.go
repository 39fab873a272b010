package proxy

import (
	"net/http"
	"testing"
)

func TestClient(t *testing.T) {
	t.Parallel()
	trust, err := ParseTrust("10.0.0.0/8, 192.168.1.7")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		peer      string
		xff       []string
		forwarded string
		want      string
	}{
		{"no proxy", "203.0.113.9:5000", nil, "", "203.0.113.9"},
		{"untrusted peer's header is ignored", "203.0.113.9:5000", []string{"1.2.3.4"}, "", "203.0.113.9"},
		{"trusted proxy names the client", "10.1.2.3:5000", []string{"198.51.100.4"}, "", "198.51.100.4"},
		{"right-most untrusted hop", "10.1.2.3:5000", []string{"6.6.6.6, 198.51.100.4, 10.9.9.9"}, "", "198.51.100.4"},
		{"client-written prefix is not believed", "10.1.2.3:5000", []string{"6.6.6.6", "198.51.100.4"}, "", "198.51.100.4"},
		{"all hops trusted: the first", "192.168.1.7:443", []string{"10.0.0.5, 10.0.0.6"}, "", "10.0.0.5"},
		{"garbage ends the walk", "10.1.2.3:5000", []string{"198.51.100.4, not-an-ip"}, "", "10.1.2.3"},
		{"port in the hop", "10.1.2.3:5000", []string{"198.51.100.4:1234"}, "", "198.51.100.4"},
		{"Forwarded header", "10.1.2.3:5000", nil, `for=192.0.2.60;proto=http, for="[2001:db8::1]:4711"`, "2001:db8::1"},
		{"Forwarded through a trusted hop", "10.1.2.3:5000", nil, `for=192.0.2.60, for=10.2.2.2`, "192.0.2.60"},
		{"trusted proxy, no header", "10.1.2.3:5000", nil, "", "10.1.2.3"},
		{"IPv4-mapped peer", "[::ffff:10.1.2.3]:5000", []string{"198.51.100.4"}, "", "198.51.100.4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: tt.peer, Header: http.Header{}}
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if tt.forwarded != "" {
				r.Header.Set("Forwarded", tt.forwarded)
			}
			if got := trust.Client(r).String(); got != tt.want {
				t.Errorf("Client() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestParseTrust(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"10.0.0.0/33", "proxy.example", "10.0.0.1-10.0.0.9"} {
		if _, err := ParseTrust(bad); err == nil {
			t.Errorf("ParseTrust(%q) accepted", bad)
		}
	}
	got, err := ParseTrust(" 10.0.0.1/8 ,,::1 ")
	if err != nil || got.String() != "10.0.0.0/8,::1/128" {
		t.Errorf("ParseTrust() = %q, %v", got, err)
	}
	var none Trust
	r := &http.Request{RemoteAddr: "127.0.0.1:1", Header: http.Header{"X-Forwarded-For": {"1.1.1.1"}}}
	if got := none.Client(r).String(); got != "127.0.0.1" {
		t.Errorf("the zero Trust believed a header: %s", got)
	}
}
