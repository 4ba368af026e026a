package acpsdk

// fionread is macOS's FIONREAD, _IOR('f', 127, int), which x/sys/unix does
// not name.
const fionread = 0x4004667f
