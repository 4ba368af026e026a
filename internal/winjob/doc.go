// Package winjob holds the Windows start primitives acpsdk's process
// transport and the adapter's launcher share: a Job Object whose members
// die with its last handle, and the resume of a child created with
// CREATE_SUSPENDED, so a child runs nothing before its job holds it. On
// other systems the package is empty.
package winjob
