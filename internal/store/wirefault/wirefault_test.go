package wirefault

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"payd/internal/store/storetest"
)

// within bounds every exchange of these tests with PostgreSQL.
const within = 10 * time.Second

// proxied starts a proxy in front of a PostgreSQL schema of the test's own
// holding the table probe, and returns it with the schema's DSN and the
// same DSN through the proxy.
func proxied(t *testing.T) (p *Proxy, direct, via string) {
	t.Helper()
	direct = storetest.PostgresDSN(t)
	p, via = Around(t, direct)
	c := connect(t, direct)
	if _, err := c.Exec(context.Background(), `CREATE TABLE probe (id int PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	return p, direct, via
}

// connect opens one connection to dsn, closed when the test ends.
func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// probes counts the probe rows with the given ids, read past the proxy.
func probes(t *testing.T, direct string, ids ...int) int {
	t.Helper()
	var n int
	if err := connect(t, direct).QueryRow(context.Background(), `SELECT count(*) FROM probe WHERE id = ANY($1)`, ids).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// insertBatch commits an insert of id as payd's store does: BEGIN, the
// statements and COMMIT in one pgx batch, each statement prepared once per
// connection and bound by name after that.
func insertBatch(ctx context.Context, c *pgx.Conn, id int) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(`INSERT INTO probe (id) VALUES ($1)`, id)
	b.Queue("COMMIT")
	return c.SendBatch(ctx, b).Close()
}

// insertSimple commits an insert of id in three exchanges, the COMMIT in
// the simple protocol (pgx's Exec without arguments).
func insertSimple(ctx context.Context, c *pgx.Conn, id int) error {
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		return err
	}
	if _, err := c.Exec(ctx, `INSERT INTO probe (id) VALUES ($1)`, id); err != nil {
		return err
	}
	_, err := c.Exec(ctx, "COMMIT")
	return err
}

// TestCutCommit: a COMMIT the proxy cuts reaches the server, which commits,
// and the client hears no answer but a broken connection; unarmed, COMMITs
// pass. In pgx's batch (the COMMIT a prepared statement, bound by name the
// second time) and in the simple protocol alike.
func TestCutCommit(t *testing.T) {
	tests := []struct {
		name   string
		insert func(context.Context, *pgx.Conn, int) error
	}{
		{"batch", insertBatch},
		{"simple", insertSimple},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, direct, via := proxied(t)
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			c := connect(t, via)
			if err := tt.insert(ctx, c, 1); err != nil {
				t.Fatalf("an insert through the proxy, nothing armed: %v", err)
			}
			p.CutCommits(1)
			err := tt.insert(ctx, c, 2)
			if err == nil {
				t.Fatal("the cut COMMIT was answered")
			}
			if !c.IsClosed() {
				t.Errorf("after the cut (%v) the client's connection is open", err)
			}
			if got := probes(t, direct, 1, 2); got != 2 {
				t.Errorf("%d of the two rows committed, want both: the cut COMMIT must reach the server", got)
			}
			c = connect(t, via)
			if err := tt.insert(ctx, c, 3); err != nil {
				t.Fatalf("an insert after the one cut: %v", err)
			}
			// Links are not counted: pgx may send a CancelRequest on a
			// connection of its own once the cut one breaks.
			if got := p.Stats(); got.Commits != 2 || got.Cut != 1 || got.Reset != 0 {
				t.Errorf("stats = %+v, want 2 commits passed, 1 cut, no connection reset", got)
			}
		})
	}
}

// TestReset: Reset breaks every open connection, and the next ones work.
func TestReset(t *testing.T) {
	p, _, via := proxied(t)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	conns := []*pgx.Conn{connect(t, via), connect(t, via)}
	for _, c := range conns {
		if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	if got := p.Reset(); got != 2 {
		t.Errorf("Reset broke %d connections, want 2", got)
	}
	for i, c := range conns {
		if _, err := c.Exec(ctx, "SELECT 1"); err == nil {
			t.Errorf("connection %d answers after the reset", i)
		}
	}
	if _, err := connect(t, via).Exec(ctx, "SELECT 1"); err != nil {
		t.Errorf("a connection after the reset: %v", err)
	}
}

// TestBlackhole: while the proxy is a blackhole nothing passes, not even a
// connection's startup; what was held goes on once it stops being one.
func TestBlackhole(t *testing.T) {
	p, _, via := proxied(t)
	c := connect(t, via)
	p.Blackhole(true)
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := c.Exec(short, "SELECT 1"); err == nil {
		t.Fatal("a query was answered through the blackhole")
	}
	links := p.Stats().Links
	answered := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		c, err := pgx.Connect(ctx, via)
		if err != nil {
			answered <- err
			return
		}
		defer c.Close(context.Background())
		_, err = c.Exec(ctx, "SELECT 1")
		answered <- err
	}()
	deadline := time.Now().Add(within)
	for p.Stats().Links == links { // the new connection is accepted, and held
		if time.Now().After(deadline) {
			t.Fatal("the proxy never accepted the connection")
		}
		time.Sleep(time.Millisecond)
	}
	p.Blackhole(false)
	if err := <-answered; err != nil {
		t.Errorf("a connection made in the blackhole, after it: %v", err)
	}
}

// TestDelay: with a delay each round trip takes twice as long more.
func TestDelay(t *testing.T) {
	p, _, via := proxied(t)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	c := connect(t, via)
	const delay = 50 * time.Millisecond
	p.SetDelay(delay)
	began := time.Now()
	if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took < 2*delay {
		t.Errorf("a round trip took %s with a delay of %s each way", took, delay)
	}
	p.SetDelay(0)
}

// TestRefusesTLS: the proxy answers an SSLRequest with no, so a client
// that prefers TLS goes on without it and one that requires it gives up.
func TestRefusesTLS(t *testing.T) {
	_, _, via := proxied(t)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	tests := []struct {
		sslmode string
		ok      bool
	}{
		{"prefer", true},
		{"require", false},
	}
	for _, tt := range tests {
		t.Run(tt.sslmode, func(t *testing.T) {
			c, err := pgx.Connect(ctx, strings.Replace(via, "sslmode=disable", "sslmode="+tt.sslmode, 1))
			if err == nil {
				defer c.Close(ctx)
				_, err = c.Exec(ctx, "SELECT 1")
			}
			if got := err == nil; got != tt.ok {
				t.Errorf("sslmode=%s: connected %v (%v), want %v", tt.sslmode, got, err, tt.ok)
			}
		})
	}
}

// TestIsCommit: what counts as a COMMIT.
func TestIsCommit(t *testing.T) {
	tests := []struct {
		query string
		want  bool
	}{
		{"COMMIT", true},
		{" commit; ", true},
		{"END", true},
		{"COMMIT WORK", true},
		{"commit transaction", true},
		{"COMMIT PREPARED 'x'", false},
		{"COMMIT AND CHAIN", false},
		{"ROLLBACK", false},
		{"SELECT 'COMMIT'", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isCommit(tt.query); got != tt.want {
			t.Errorf("isCommit(%q) = %v, want %v", tt.query, got, tt.want)
		}
	}
}
