// Package cpuset reads and writes lists of CPUs ("0-3,6"), splits the CPUs a
// process may run on between a server process and its load generator, and
// pins a whole process to some of them (on Linux; elsewhere it says why it
// cannot), so that the API benchmark's figures are the server's alone.
package cpuset
