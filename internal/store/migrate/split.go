package migrate

import "strings"

// SplitSQL splits a script of PostgreSQL statements at its semicolons,
// leaving alone those inside quotes ('…', "…", $tag$…$tag$) and comments
// (--…, /*…*/). Statements that are only comments are dropped. Citus needs
// a migration's statements one at a time once its tables are distributed:
// it forwards a changed table's whole query text to the workers, which
// refuse several commands in one (citus.go).
func SplitSQL(script string) []string {
	var out []string
	start, code := 0, false // code: the statement has more than comments
	flush := func(end int) {
		if code {
			out = append(out, strings.TrimSpace(script[start:end]))
		}
		start, code = end+1, false
	}
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case c == '-' && strings.HasPrefix(script[i:], "--"):
			if n := strings.IndexByte(script[i:], '\n'); n >= 0 {
				i += n
			} else {
				i = len(script)
			}
		case c == '/' && strings.HasPrefix(script[i:], "/*"):
			depth := 0
			for ; i < len(script); i++ {
				if strings.HasPrefix(script[i:], "/*") {
					depth++
					i++
				} else if strings.HasPrefix(script[i:], "*/") {
					depth--
					i++
					if depth == 0 {
						break
					}
				}
			}
		case c == '\'' || c == '"':
			code = true
			for i++; i < len(script); i++ {
				if script[i] == c {
					if i+1 < len(script) && script[i+1] == c { // a doubled quote
						i++
						continue
					}
					break
				}
			}
		case c == '$' && dollarTag(script[i:]) != "" && (i == 0 || !identByte(script[i-1])):
			code = true
			tag := dollarTag(script[i:])
			if n := strings.Index(script[i+len(tag):], tag); n >= 0 {
				i += len(tag) + n + len(tag) - 1
			} else {
				i = len(script)
			}
		case c == ';':
			flush(i)
		case c != ' ' && c != '\t' && c != '\n' && c != '\r':
			code = true
		}
	}
	flush(len(script))
	return out
}

// dollarTag returns the $tag$ s starts with, or "".
func dollarTag(s string) string {
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '$':
			return s[:i+1]
		case identByte(s[i]) && !(i == 1 && s[i] >= '0' && s[i] <= '9'):
		default:
			return ""
		}
	}
	return ""
}

func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
