// Package cpuclock reads the CPU time the process has used, for the
// benchmarks that report an operation's CPU time beside its wall time
// (cpu-ns/op): on a host shared with other work the wall time of a loop
// grows with the time the process waits for a core, its CPU time much
// less, so the ratio of two benchmarks' CPU times moves less with the
// host's noise.
package cpuclock

import "time"

// Now returns the CPU time the process has used so far, user and system,
// on every thread (the garbage collector's included); 0 on a system that
// does not tell.
func Now() time.Duration { return now() }
