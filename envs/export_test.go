package envs

// SpoolRead returns how many bytes [Spool.Fit] has read back from spool
// files so far.
func SpoolRead() int64 { return spoolRead.Load() }
