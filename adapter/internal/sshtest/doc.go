// Package sshtest runs a private OpenSSH server on 127.0.0.1 for the SSH
// launch tests (spec §21), and an ssh client set up to reach it, without
// touching any global configuration: host keys, the client key,
// authorized_keys, known_hosts and both configuration files live in the
// test's temporary directory.
//
// The adapter composes ssh's argument list itself (SSH-1 fixes it), so a
// test cannot add -p or -i there. Instead Server.UseClient puts a
// directory first on PATH holding an `ssh` wrapper script: it records the
// arguments the adapter passed (Server.Argv) and execs the real client
// with `-F <own config>` in front, where host aliases (Host, NoDDHost,
// ClosedHost) carry the port, user, identity and known-hosts file. The
// wrapper execs, so the pid the adapter sees is the real ssh client's.
// HOME could not do this: ssh finds ~/.ssh through the password database,
// not $HOME.
package sshtest
