package bank

import "payd/internal/payfile/zengin"

// HalfWidthKana converts full-width katakana, full-width Latin letters,
// digits and the marks of Zengin names (－ ． （ ） ／ and the ideographic
// space) to their half-width forms; other characters are kept. The table
// lives with the Zengin file format (zengin.HalfWidthKana), which writes
// these names; the directory's kana names are already what Zengin files
// carry, so width is all that changes.
func HalfWidthKana(s string) string { return zengin.HalfWidthKana(s) }
