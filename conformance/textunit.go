package conformance

import "github.com/tidemarkdb/tidemark/core/dialect"

// mostFourByte is how many four-byte characters (beyond U+FFFF) a
// VARCHAR(length) of the engine holds, at most the spec's 255 characters:
// its declared unit (EngineFacts.TextUnit) counts each as one character,
// two UTF-16 code units or four bytes.
func mostFourByte(f dialect.EngineFacts, length int) int {
	per := f.TextUnit.Len("😀")
	return min(255, length/per)
}
