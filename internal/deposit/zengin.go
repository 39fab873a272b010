package deposit

// IsZenginText reports whether s uses only the characters of the Japanese
// domestic interbank (Zengin) format: half-width katakana and their marks,
// digits, upper-case Latin letters, space and ( ) . , - / \. The empty
// string is allowed (the remitter fields are optional).
func IsZenginText(s string) bool {
	for _, r := range s {
		switch {
		case r >= 0xFF61 && r <= 0xFF9F: // half-width katakana block, with ｡｢｣､･ and the (semi-)voiced marks
		case r >= '0' && r <= '9', r >= 'A' && r <= 'Z':
		case r == ' ' || r == '(' || r == ')' || r == '.' || r == ',' || r == '-' || r == '/' || r == '\\':
		default:
			return false
		}
	}
	return true
}
