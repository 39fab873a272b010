package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/user"
	"strings"
	"time"
	"unicode/utf8"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/store"
)

// The operator audit log (CONTRACT §17, §25): every operator command that
// changes an operator record appends who ran it, when, with which
// arguments, and how it ended. A change and its entry commit together; a
// refused change is logged too, in a transaction of its own.

// maxActorLen bounds --actor.
const maxActorLen = 100

// actor defines --actor on an auditing command and returns who runs it,
// set by check (the command's check before its database opens).
func (o *operator) actor() (who *string, check func() error) {
	flag := o.String("actor", "", "who runs the command, as the operator audit log names them (default: the OS user)")
	who = new(string)
	return who, func() error {
		var err error
		*who, err = actorOf(*flag)
		return err
	}
}

// actorOf is who runs the command: --actor, else the OS user.
func actorOf(flag string) (string, error) {
	if flag = strings.TrimSpace(flag); flag != "" {
		if utf8.RuneCountInString(flag) > maxActorLen || !utf8.ValidString(flag) {
			return "", usageError{fmt.Sprintf("--actor: must be at most %d characters", maxActorLen)}
		}
		return flag, nil
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username, nil
	}
	return "unknown", nil
}

// auditArgs are a command's arguments as the log keeps them: all but the
// database's (its DSN may carry a password).
func auditArgs(args []string) []string {
	out := []string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--db" || a == "-db":
			i++ // its value
		case strings.HasPrefix(a, "--db=") || strings.HasPrefix(a, "-db="):
		default:
			out = append(out, a)
		}
	}
	return out
}

// audited runs change in a transaction with the audit entry of command
// (its actor and args), whose outcome is what change returns; when change
// fails, the refusal is logged on its own and its error returned.
func audited(ctx context.Context, db *store.DB, actor, command string, args []string, change func(tx *store.Tx) (string, error)) error {
	raw, err := json.Marshal(auditArgs(args))
	if err != nil {
		return err
	}
	entry := func(tx *store.Tx, outcome string) error {
		// global lookup: the operator audit log is no merchant's.
		return tx.Send(ctx, `INSERT INTO operator_audit (at, actor, command, args, outcome) VALUES ($1, $2, $3, $4, $5)`,
			clock.Real{}.Now().UnixMilli(), actor, command, string(raw), outcome)
	}
	err = db.Exec(ctx, func(tx *store.Tx) error {
		outcome, err := change(tx)
		if err != nil {
			return err
		}
		return entry(tx, outcome)
	})
	if err == nil {
		return nil
	}
	if logErr := db.Exec(ctx, func(tx *store.Tx) error { return entry(tx, "refused: "+refusalText(err)) }); logErr != nil {
		return fmt.Errorf("%w (and the audit log could not record the refusal: %v)", err, logErr)
	}
	return err
}

// refusalText is err as the audit log keeps it: its message.
func refusalText(err error) string {
	if e, ok := fault.As(err); ok {
		return e.Message
	}
	return err.Error()
}

// auditEntry is one entry of the log as payd audit list --json shows it.
type auditEntry struct {
	ID      int64      `json:"id"`
	At      clock.Time `json:"at"`
	Actor   string     `json:"actor"`
	Command string     `json:"command"`
	Args    []string   `json:"args"`
	Outcome string     `json:"outcome"`
}

// maxAuditListed bounds payd audit list: the newest entries.
const maxAuditListed = 1000

func readAudit(ctx context.Context, q store.Querier) ([]auditEntry, error) {
	// global lookup: the operator audit log is no merchant's.
	rows, err := q.QueryContext(ctx, `SELECT id, at, actor, command, args, outcome FROM operator_audit ORDER BY id DESC`+store.Limit(maxAuditListed))
	if err != nil {
		return nil, fmt.Errorf("read the operator audit log: %w", err)
	}
	defer rows.Close()
	out := []auditEntry{}
	for rows.Next() {
		var e auditEntry
		var at int64
		var args string
		if err := rows.Scan(&e.ID, &at, &e.Actor, &e.Command, &args, &e.Outcome); err != nil {
			return nil, err
		}
		e.At = clock.Time{T: clock.FromMillis(at)}
		if err := json.Unmarshal([]byte(args), &e.Args); err != nil {
			return nil, fmt.Errorf("audit entry %d: %w", e.ID, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// runAuditList prints the operator audit log, newest first.
func runAuditList(ctx context.Context, env *cliEnv, args []string) error {
	o := newOperator(env, "audit list")
	return o.run(ctx, args, nil, func(_ *merchant.Service, db *store.DB) (answer, error) {
		entries, err := readAudit(ctx, db.Read())
		return answer{value: map[string]any{"records": entries}, text: func(w io.Writer) {
			for _, e := range entries {
				fmt.Fprintf(w, "%d %s %s: payd %s %s: %s\n", e.ID, e.At.T.UTC().Format(time.RFC3339), e.Actor, e.Command, strings.Join(e.Args, " "), e.Outcome)
			}
		}}, err
	})
}
