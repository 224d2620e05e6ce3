package bpe

// byteClass sorts the bytes of text for lowerBound.
type byteClass uint8

const (
	classSpace  byteClass = iota // ASCII whitespace: space, \t, \n, \v, \f, \r
	classPunct                   // ASCII punctuation and symbols, '\'' included
	classLetter                  // ASCII letter
	classDigit                   // ASCII digit
	classOther                   // other ASCII controls, and the bytes of characters outside ASCII: anything
)

var classes = func() (t [256]byteClass) {
	for b := range 256 {
		switch {
		case b == ' ', '\t' <= b && b <= '\r':
			t[b] = classSpace
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z':
			t[b] = classLetter
		case '0' <= b && b <= '9':
			t[b] = classDigit
		case '!' <= b && b <= '~':
			t[b] = classPunct
		default:
			t[b] = classOther
		}
	}
	return t
}()

// lowerBound returns a number of tokens text has at least, with o200k_base
// and cl100k_base alike, reading each byte once.
//
// Both encodings split text into pieces and encode each piece into at least
// one token; lowerBound counts pieces it can tell apart from the bytes
// alone:
//   - A piece holding letters holds one run of letters (and marks), at most
//     one character before it that is neither a letter, a digit nor a line
//     break, and after it at most an English contraction ('s, 't, 're, 've,
//     'm, 'll, 'd). So an ASCII letter that follows an ASCII space, digit or
//     punctuation mark other than the apostrophe (or starts the text) starts
//     a piece of its own.
//   - Digits go in pieces of one to three digits that hold nothing else: a
//     run of ASCII digits with ASCII bytes other than digits on both sides
//     (or the text's ends) is ceil(n/3) pieces.
//   - A run of ASCII punctuation followed by whitespace (or the end) is in a
//     piece of punctuation that holds no other run, except that o200k_base
//     lets such a piece take line breaks and '/' after it: a run that starts
//     with '/' after a line break (or at the start) is not counted.
//
// Bytes outside ASCII could be letters, marks, digits, punctuation or
// spaces, so they never start a count and never end a run. Nothing counted
// reaches across a line break, so bounds add up: lowerBound(a) +
// lowerBound(b) <= Count(a + "\n\n" + b).
func lowerBound(text string) int {
	n := 0
	prev := classSpace
	prevByte := byte('\n')
	digits := 0      // length of the current run of digits
	digitsOK := true // the run of digits has no byte outside ASCII before it
	punct := false   // in a run of punctuation that may be counted
	for i := 0; i < len(text); i++ {
		b := text[i]
		c := classes[b]
		switch {
		case c == classDigit:
			if digits == 0 {
				digitsOK = prev != classOther
			}
			digits++
		case digits > 0:
			if digitsOK && c != classOther {
				n += (digits + 2) / 3
			}
			digits = 0
		}
		switch c {
		case classLetter:
			if prev == classSpace || prev == classDigit || (prev == classPunct && prevByte != '\'') {
				n++
			}
		case classPunct:
			if prev != classPunct {
				punct = !(b == '/' && (prevByte == '\n' || prevByte == '\r'))
			}
		case classSpace:
			if prev == classPunct && punct {
				n++
			}
		}
		prev, prevByte = c, b
	}
	if digits > 0 && digitsOK {
		n += (digits + 2) / 3
	}
	if prev == classPunct && punct {
		n++
	}
	return n
}
