package acpsdk

import "golang.org/x/sys/unix"

// fionread is Linux's FIONREAD, which x/sys/unix names TIOCINQ (its value
// differs between architectures).
const fionread = unix.TIOCINQ
