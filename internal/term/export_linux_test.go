package term

// SpinLooks is how many times r looked at the terminal while spinning.
func SpinLooks(r *Reader) uint64 { return r.looks }
