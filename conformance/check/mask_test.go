package check

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMasker_MasksSecretsAsGivenAndJSONEscaped(t *testing.T) {
	m := newMasker([]string{`pa"ss\word`, "sk-abcdef-LONGER", "sk-abcdef", "on"})
	assert.Equal(t, "key *** and ***", m.text("key sk-abcdef-LONGER and sk-abcdef"), "the longer secret is masked whole")
	assert.Equal(t, `{"password":"***"}`, m.text(`{"password":"pa\"ss\\word"}`), "as it appears in a JSON line")
	assert.Equal(t, "turn on", m.text("turn on"), "values shorter than MinSecretLen are not masked")
	ls := m.lines([]Line{{Text: "got sk-abcdef"}})
	assert.Equal(t, "got ***", ls[0].Text)
	var none *masker
	assert.Equal(t, "sk-abcdef", none.text("sk-abcdef"))
}

func TestTranscript_MasksBeforeCutting(t *testing.T) {
	secret := "sk-0123456789"
	tr := newTranscript(newMasker([]string{secret}))
	line := make([]byte, maxTranscriptText-5)
	for i := range line {
		line[i] = 'x'
	}
	tr.add(DirRecv, append(line, secret...)) // the secret straddles the cut
	got := tr.snapshot()[0].Text
	assert.NotContains(t, got, "sk-01234")
	assert.Contains(t, got, "xxx***")
}
