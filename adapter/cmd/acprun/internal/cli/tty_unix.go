//go:build !windows

package cli

import (
	"io"
	"os"
)

// OpenControllingTerminal opens the terminal acprun runs at, whatever its
// standard streams are (`git diff | acprun --permissions ask …` still asks
// there); an error when it has none.
func OpenControllingTerminal() (io.ReadWriteCloser, error) {
	return os.OpenFile("/dev/tty", os.O_RDWR, 0)
}
