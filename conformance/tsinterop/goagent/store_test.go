package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"acpkit.dev/acpsdk/gen"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestStoreIDsAreUniqueAcrossProcessesSharingADir(t *testing.T) {
	dir := t.TempDir()
	a, b := newStore(dir), newStore(dir)
	id1, err := a.create()
	require.NoError(t, err)
	id2, err := b.create()
	require.NoError(t, err)
	id3, err := a.create()
	require.NoError(t, err)
	assert.Equal(t, []gen.SessionID{"sess-1", "sess-2", "sess-3"}, []gen.SessionID{id1, id2, id3})
}

func TestStoreLoadsWhatAnotherProcessSaved(t *testing.T) {
	dir := t.TempDir()
	first := newStore(dir)
	id, err := first.create()
	require.NoError(t, err)
	first.mu.Lock()
	sess := first.sessions[id]
	sess.history = append(sess.history, entry{roleUser, "hi"}, entry{roleAgent, "hello"})
	require.NoError(t, first.saveLocked(id, sess))
	first.mu.Unlock()

	second := newStore(dir)
	second.mu.Lock()
	defer second.mu.Unlock()
	got, err := second.lookupLocked(id)
	require.NoError(t, err)
	assert.Equal(t, []entry{{roleUser, "hi"}, {roleAgent, "hello"}}, got.history)
}

func TestStoreUnknownSession(t *testing.T) {
	for name, dir := range map[string]string{"memory": "", "dir": t.TempDir()} {
		t.Run(name, func(t *testing.T) {
			s := newStore(dir)
			s.mu.Lock()
			defer s.mu.Unlock()
			_, err := s.lookupLocked("sess-9")
			require.ErrorIs(t, err, errUnknownSession)
		})
	}
}

func TestStoreIDCannotEscapeDir(t *testing.T) {
	dir := t.TempDir()
	s := newStore(dir)
	for _, id := range []gen.SessionID{"../x", "a/b", "/etc/passwd", ".."} {
		assert.Equal(t, dir, filepath.Dir(s.file(id)), "id %q", id)
	}
}

func TestStoreCorruptFileIsATypedError(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sess-1.json"), []byte(`{"history":[{"role":"robot","text":"x"}]}`), 0o600))
	s := newStore(dir)
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.lookupLocked("sess-1")
	require.ErrorIs(t, err, errCorruptSession)
}

func FuzzDecodeSession(f *testing.F) {
	for _, seed := range []string{
		`{"history":[]}`,
		`{"history":[{"role":"user","text":"hi"},{"role":"agent","text":"hello"}]}`,
		`{"history":[{"role":"robot","text":"x"}]}`,
		`{"history":null}`,
		`{"history":`,
		`[]`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		history, err := decodeSession(data)
		if err != nil {
			require.ErrorIs(t, err, errCorruptSession)
			return
		}
		for _, e := range history {
			require.Contains(t, []role{roleUser, roleAgent}, e.Role)
		}
	})
}
