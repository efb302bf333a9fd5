package conformance

import (
	"context"
	"errors"
	"strings"

	"github.com/tidemarkdb/tidemark/core/projection"
)

// testProjectionTextSizedToUnit writes a TEXT query field of the most
// four-byte characters the engine's VARCHAR(255) holds in the unit it
// counts (EngineFacts.TextUnit: 255 characters, 127 UTF-16 code units'
// worth, 63 bytes' worth) and finds it back; a value of one more such
// character is refused with a *projection.ValueError before any SQL.
func testProjectionTextSizedToUnit(t T, env *Env) {
	r := newProjRig(t, env)
	stop := r.run(t, nil)
	defer stop()
	ctx := context.Background()
	four := mostFourByte(env.Catalogue.Facts, 255)
	most := strings.Repeat("😀", four)
	r.append(t, "bank.Account", "wide-1", projOpened{IBAN: most, Rank: 1}, projDeposited{Amount: "1"})
	r.waitDeposits(t, "wide-1", 1)
	it, ok, err := r.st.FindUnique(ctx, "iban", most)
	if err != nil || !ok || it.Key != "wide-1" {
		t.Fatalf("FindUnique by an iban of %d four-byte characters: %+v, %v, %v", four, it, ok, err)
	}
	_, _, err = r.st.FindUnique(ctx, "iban", most+"😀")
	var ve *projection.ValueError
	if !errors.As(err, &ve) || ve.Column != "iban" {
		t.Fatalf("FindUnique by an iban of %d four-byte characters: %v; want a *projection.ValueError (the column holds %d of them in %s)",
			four+1, err, four, env.Catalogue.Facts.TextUnit.Name())
	}
	t.Logf("refused: %v", err)
}
