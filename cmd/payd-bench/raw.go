package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// rawPoster posts JSON over one kept-alive connection, writing the request's
// bytes itself and reading the answer without net/http's per-connection
// goroutines. The noisy merchant uses it: on a real deployment its load
// comes from someone else's machine, so here it should cost this one as
// little as a load generator can.
type rawPoster struct {
	host, path string
	head       []byte // request line and fixed headers
	conn       net.Conn
	r          *bufio.Reader
	buf        []byte
}

func newRawPoster(base, path string, headers map[string]string) *rawPoster {
	host := strings.TrimPrefix(base, "http://")
	head := "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n"
	for k, v := range headers {
		head += k + ": " + v + "\r\n"
	}
	return &rawPoster{host: host, path: path, head: []byte(head)}
}

// post sends body and returns the answer's status, reconnecting when the
// connection was closed.
func (p *rawPoster) post(body []byte) (int, error) {
	if p.conn == nil {
		c, err := net.Dial("tcp", p.host)
		if err != nil {
			return 0, err
		}
		p.conn, p.r = c, bufio.NewReaderSize(c, 4096)
	}
	p.buf = append(p.buf[:0], p.head...)
	p.buf = append(p.buf, "Content-Length: "...)
	p.buf = strconv.AppendInt(p.buf, int64(len(body)), 10)
	p.buf = append(p.buf, "\r\n\r\n"...)
	p.buf = append(p.buf, body...)
	if _, err := p.conn.Write(p.buf); err != nil {
		p.close()
		return 0, err
	}
	res, err := http.ReadResponse(p.r, nil)
	if err != nil {
		p.close()
		return 0, err
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if err != nil || res.Close {
		p.close()
	}
	return res.StatusCode, err
}

func (p *rawPoster) close() {
	if p.conn != nil {
		p.conn.Close()
		p.conn = nil
	}
}
