// Package ptyfloor runs a program on a pseudo-terminal with nothing
// around it: the floors that bench/compare and the bash environment's
// benchmark compare a pty environment with.
package ptyfloor
