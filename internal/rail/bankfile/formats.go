package bankfile

import (
	"payd/internal/iso20022"
	"payd/internal/payfile"
	"payd/internal/payfile/aba"
	"payd/internal/payfile/zengin"
)

// FormatWriters are the writers of the formats payd writes, for Deps.Writers.
func FormatWriters() map[payfile.Format]Writer {
	return map[payfile.Format]Writer{
		payfile.ABA:     aba.Write,
		payfile.Pain001: iso20022.WritePain001,
		payfile.Zengin:  zengin.Write,
	}
}
