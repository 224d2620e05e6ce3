// Package bpe counts tokens exactly with the byte-pair encodings of OpenAI's
// models: o200k_base (GPT-4o and later) and cl100k_base (GPT-4, GPT-3.5).
// The vocabularies are compiled into the program; nothing is downloaded at
// run time.
//
// # Counting
//
// [O200kBase] and [Cl100kBase] return the two counters, [For] one by name.
// A [Counter] implements the tokens.Counter interface:
//
//	n := bpe.O200kBase().Count(text)
//
// The vocabularies are compiled in as ready-to-use tables, generated from
// those of github.com/tiktoken-go/tokenizer and checked against them by the
// tests, so the first Count of a process costs what the later ones do, about
// 10 ms per megabyte of text, with no allocation; the program links neither
// tiktoken-go nor any encoding it does not count with.
//
// That is the cost of text in words, lines and numbers. A chunk that is
// not a token costs more the longer it is, and text can make one chunk as
// long as itself: a run of one character ("=====", spaces, "AAAA" in
// base64 of zeros), or of letters, symbols or bytes that are not UTF-8
// with nothing between them. A chunk whose bytes come in runs of 32 or
// more on average merges run by run, in a few steps per run: a megabyte of
// one ASCII character counts in about 5 ms. Any other chunk longer than 64
// bytes merges through a heap, at about a microsecond and 28 bytes of
// memory, allocated for the count, per byte of the chunk: a megabyte of
// random letters, or of one character of more than one byte ("ééé…"),
// takes 0.5 to 2 s and 28 MB.
// A byte that is not UTF-8 counts as U+FFFD, three bytes, and text holding
// such bytes is copied with them replaced first, so a chunk of them costs
// three times as much and more: a megabyte of 0xff bytes takes about 2 s
// and 100 MB, and a prompt file of 8 MiB of them about a gigabyte.
//
// # How it counts
//
// Counting happens in two steps, as in OpenAI's tiktoken. A pre-tokenizer
// splits the text into chunks: words with their leading space or
// punctuation, runs of up to three digits, runs of punctuation, runs of
// whitespace. Then byte-pair encoding merges the bytes of each chunk into
// tokens; a chunk that is itself a token, as most words are, costs one
// lookup.
//
// OpenAI's tiktoken describes the split with regular expressions run by a
// backtracking matcher; this package splits with hand-written code that
// gives the same chunks for every input.
//
// # Agreement
//
// The counts are OpenAI's tiktoken's, and so those of its JavaScript ports
// gpt-tokenizer and js-tiktoken, which read the split patterns the same
// way, but for a few runes: JavaScript's \s takes U+FEFF and not U+0085,
// and the ports match "'s" without case folding, so not as "'ſ". Text that
// is not valid UTF-8, which tiktoken does not take, counts as if each
// invalid byte were U+FFFD.
//
// The vocabularies come from tiktoken-go, but its counts are not always
// these: its matcher ends a run of whitespace after its first line breaks
// where the patterns end it after the last ("a\n  \n  b" is 5 tokens there,
// 4 here and in tiktoken), and puts DEL (U+007F) in no chunk, so that it
// costs nothing.
//
// # Lower bound
//
// [Counter.LowerBound] counts, in one pass over the bytes, the chunks that
// can be told apart without classifying characters outside ASCII: words
// after a space or punctuation, runs of digits, runs of punctuation before
// whitespace. It needs no vocabulary, never exceeds Count, and bounds add up
// across a blank line, so a budgeted render can show cheaply that a section
// cannot fit before any exact count.
package bpe
