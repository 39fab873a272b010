package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"payd/internal/webhook"
)

// payd listen and payd trigger (CONTRACT §21, §25) are for integrators on
// a laptop: they use only payd's public API, as an app, never its
// database. listen reads GET /api/v2/events/stream and forwards each event
// to a local URL, signed with a local secret; payd's server never dials
// that URL.

// apiClient calls payd's public API as one app.
type apiClient struct {
	base, appID, secretKey string
	http                   *http.Client
}

// newAPIClient is a client of the payd whose public URL is api (payd's API
// is under /api there).
func newAPIClient(api, appID, secretKey string) (*apiClient, error) {
	u, err := url.Parse(api)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError{"--api: must be payd's public URL, such as http://localhost:8080"}
	}
	return &apiClient{base: strings.TrimRight(api, "/") + "/api", appID: appID, secretKey: secretKey,
		http: &http.Client{Timeout: 2 * time.Minute}}, nil
}

// maxAnswerBytes bounds an API answer the commands read.
const maxAnswerBytes = 4 << 20

// call sends a JSON request (body nil: none) and decodes a 2xx answer into
// out (nil: ignored); another status is an apiError.
func (c *apiClient) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	c.authorize(req)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes))
	if err != nil {
		return err
	}
	if res.StatusCode/100 != 2 {
		return apiError{method: method, path: path, status: res.StatusCode, body: strings.TrimSpace(string(raw))}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

func (c *apiClient) authorize(req *http.Request) {
	req.Header.Set("app-id", c.appID)
	req.Header.Set("secret-key", c.secretKey)
	req.Header.Set("User-Agent", "payd-cli/1")
}

// apiError is an answer that is not a 2xx.
type apiError struct {
	method, path string
	status       int
	body         string
}

func (e apiError) Error() string {
	return fmt.Sprintf("%s /api%s answered %d: %.500s", e.method, e.path, e.status, e.body)
}

// listenState is what payd listen keeps per app under the user's config
// directory: its local signing secret (the same across restarts) and the
// last event it forwarded (where the next run resumes).
type listenState struct {
	Secret      string `json:"secret"`
	LastEventID string `json:"last_event_id"`
}

// safeAppID is an app id usable as a file name as it is.
var safeAppID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// listenStatePath is where payd listen keeps its state for appID at api.
func listenStatePath(api, appID string) (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the config directory: %w", err)
	}
	name := appID
	if !safeAppID.MatchString(name) {
		sum := sha256.Sum256([]byte(appID))
		name = hex.EncodeToString(sum[:8])
	}
	host := sha256.Sum256([]byte(strings.TrimRight(api, "/")))
	return filepath.Join(dir, "payd", "listen", hex.EncodeToString(host[:4])+"-"+name+".json"), nil
}

// loadListenState reads the state at path, making a new secret the first time.
func loadListenState(path string) (listenState, error) {
	var st listenState
	raw, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return st, err
	default:
		if err := json.Unmarshal(raw, &st); err != nil {
			return st, fmt.Errorf("%s: %w (delete it to start over)", path, err)
		}
	}
	if st.Secret == "" {
		b := make([]byte, 32)
		rand.Read(b)
		st.Secret = "whsec_" + base64.StdEncoding.EncodeToString(b)
		return st, saveListenState(path, st)
	}
	return st, nil
}

// saveListenState writes st to path whole or not at all (a new file
// renamed over the old, synced first): a listen killed at any moment
// finds the last position it saved.
func saveListenState(path string, st listenState) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	raw, _ := json.Marshal(st)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".listen-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// sseEvent is one event read from the stream.
type sseEvent struct{ id, typ, data string }

// maxSSELine bounds one line of the stream (an event's data is one line).
const maxSSELine = 8 << 20

// readSSE calls each for every event of the stream r until it ends.
func readSSE(r io.Reader, each func(sseEvent) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxSSELine)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.data != "" || ev.id != "" {
				if err := each(ev); err != nil {
					return err
				}
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, ":"):
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				ev.id = value
			case "event":
				ev.typ = value
			case "data":
				if ev.data != "" {
					ev.data += "\n"
				}
				ev.data += value
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

// listener forwards one app's events to a local URL.
type listener struct {
	env       *cliEnv
	api       *apiClient
	forwardTo string
	types     string
	statePath string
	state     listenState
	forward   *http.Client
	ready     bool
}

func runListen(ctx context.Context, env *cliEnv, args []string) error {
	f := newFlags(env, "listen")
	api := f.String("api", "", "payd's public URL, such as http://localhost:8080 (payd appends /api)")
	appID := f.String("app-id", "", "the app whose merchant's events are forwarded")
	secretKey := f.String("secret-key", "", "the app's secret key")
	forwardTo := f.String("forward-to", "", "the local URL each event is POSTed to, such as http://localhost:3000/webhooks")
	events := f.String("events", "", "comma-separated event types to forward (payin.*,payout.*); default every type")
	if err := f.parse(args); err != nil {
		return err
	}
	if err := required(map[string]*string{"api": api, "app-id": appID, "secret-key": secretKey, "forward-to": forwardTo}); err != nil {
		return err
	}
	if u, err := url.Parse(*forwardTo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError{"--forward-to: must be an http(s) URL, such as http://localhost:3000/webhooks"}
	}
	types := strings.ReplaceAll(*events, " ", "")
	if types != "" {
		if err := webhook.CheckTypes("events", strings.Split(types, ",")); err != nil {
			return usageError{"--events: must be event types, prefixes ending in * (payin.*) or *"}
		}
	}
	client, err := newAPIClient(*api, *appID, *secretKey)
	if err != nil {
		return err
	}
	path, err := listenStatePath(*api, *appID)
	if err != nil {
		return err
	}
	st, err := loadListenState(path)
	if err != nil {
		return err
	}
	l := &listener{env: env, api: client, forwardTo: *forwardTo, types: types, statePath: path, state: st,
		forward: &http.Client{Timeout: 15 * time.Second}}
	return l.run(ctx)
}

// Reconnection delays of payd listen.
const (
	reconnectFirst = 500 * time.Millisecond
	reconnectMax   = 10 * time.Second
)

// run reads the stream until ctx ends, reconnecting after the position it
// saved whenever the stream breaks; a refusal (a 4xx: bad keys, a position
// past the retention) ends it.
func (l *listener) run(ctx context.Context) error {
	delay := reconnectFirst
	for {
		err := l.stream(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var refused apiError
		if errors.As(err, &refused) && refused.status/100 == 4 && refused.status != http.StatusTooManyRequests {
			return err
		}
		fmt.Fprintf(l.env.stderr, "stream interrupted (%v); reconnecting in %s\n", err, delay)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		delay = min(2*delay, reconnectMax)
	}
}

// stream reads one connection of the stream, forwarding each event.
func (l *listener) stream(ctx context.Context) error {
	if l.state.LastEventID == "" {
		if err := l.startPosition(ctx); err != nil {
			return err
		}
	}
	path := "/v2/events/stream"
	if l.types != "" {
		path += "?type=" + url.QueryEscape(l.types)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.api.base+path, nil)
	if err != nil {
		return err
	}
	l.api.authorize(req)
	req.Header.Set("Accept", "text/event-stream")
	if l.state.LastEventID != "" {
		req.Header.Set("Last-Event-ID", l.state.LastEventID)
	}
	res, err := (&http.Client{}).Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		return apiError{method: "GET", path: path, status: res.StatusCode, body: strings.TrimSpace(string(raw))}
	}
	if !l.ready {
		l.ready = true
		fmt.Fprintf(l.env.stdout, "Ready! Your webhook signing secret is %s (^C to quit)\n", l.state.Secret)
	}
	return readSSE(res.Body, func(ev sseEvent) error { return l.deliver(ctx, ev) })
}

// startPosition makes a first run start after the merchant's newest event,
// so that what happens from now on is forwarded, once.
func (l *listener) startPosition(ctx context.Context) error {
	var page struct {
		Records []struct {
			ID string `json:"id"`
		} `json:"records"`
	}
	if err := l.api.call(ctx, "GET", "/v2/events?size=1", nil, &page); err != nil {
		return err
	}
	if len(page.Records) == 1 {
		l.state.LastEventID = page.Records[0].ID
	}
	return saveListenState(l.statePath, l.state)
}

// forwardAttempts bounds the tries at forwarding one event.
const forwardAttempts = 3

// deliver forwards ev to the local URL (trying forwardAttempts times when
// it cannot connect), saves it as the position, and prints both ends.
func (l *listener) deliver(ctx context.Context, ev sseEvent) error {
	fmt.Fprintf(l.env.stdout, "--> %s [%s]\n", ev.typ, ev.id)
	status := ""
	for attempt := 1; attempt <= forwardAttempts; attempt++ {
		code, err := l.post(ctx, ev)
		if err == nil {
			status = strconv.Itoa(code)
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		status = "ERROR " + err.Error()
		if attempt < forwardAttempts {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second):
			}
		}
	}
	l.state.LastEventID = ev.id
	if err := saveListenState(l.statePath, l.state); err != nil {
		return fmt.Errorf("save the position: %w", err)
	}
	fmt.Fprintf(l.env.stdout, "<-- [%s] %s [%s]\n", status, ev.typ, ev.id)
	return nil
}

// post sends one event to the local URL as payd would (Standard Webhooks).
func (l *listener) post(ctx context.Context, ev sseEvent) (int, error) {
	now := time.Now()
	sig, err := webhook.Sign(l.state.Secret, ev.id, now, []byte(ev.data))
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.forwardTo, strings.NewReader(ev.data))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "payd-listen/1")
	req.Header.Set("X-Event-Type", ev.typ)
	req.Header.Set("webhook-id", ev.id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	res, err := l.forward.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	return res.StatusCode, nil
}
