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
// A counter builds its tables on its first Count, from the vocabulary of
// github.com/tiktoken-go/tokenizer: that call takes tens of milliseconds
// more (about 50 ms for o200k_base), the later ones about 10 ms per
// megabyte of text, with no allocation.
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
// tiktoken-go describes the split with regular expressions run by a
// backtracking matcher; this package splits with hand-written code that
// gives the same chunks for every input.
//
// # Agreement
//
// The counts are tiktoken-go's for every text, invalid UTF-8 included: an
// invalid byte counts as U+FFFD. They are also OpenAI's tiktoken's, except
// where tiktoken-go's matcher departs from it: DEL (U+007F) costs nothing,
// and a run of whitespace holding line breaks that a space or tab
// separates ("\n  \n") splits after its first line breaks, which changes
// the count now and then.
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
