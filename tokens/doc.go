// Package tokens counts the tokens a text costs a model.
//
// [Counter] is the interface the prompt package's token budgets use. This
// package holds a fast estimate, [Estimate], that needs no vocabulary;
// exact byte-pair-encoding counts for the o200k_base and cl100k_base
// encodings are in the subpackage bpe, so programs that do not need exact
// counts do not link its vocabularies.
//
// # Accuracy of the estimate
//
// Measured against o200k_base on the sample texts in testdata (English
// prose, Go code, JSON, shell output, markdown), the estimate is within 12%
// of the exact count on each (from 6% under to 11% over); the test pins
// that bound. On base64, hex digests and random identifiers of 12 or more
// letters and digits (both) it comes out at 1.03 to 1.1 times the exact
// count (a test pins 0.97 to 1.2), so a budget counted with it holds for
// them too. Where it is further off:
//
//   - Cyrillic and accented Latin it counts at about one token per two
//     letters, so Russian comes out at about 2.1 times the exact count and
//     Vietnamese at 1.7. It counts a token for each CJK character, which
//     puts Chinese at about 1.6 times the exact count.
//   - Random letters with no digits ("xkqzjvwp…", "aBcDeFgH…") look like
//     words to it: a quarter to a third of the exact count.
//   - Random identifiers shorter than 12 bytes (about 0.6 times the exact
//     count for 11), or holding `_` or `-` (nanoid's alphabet, about 0.9),
//     count as words and numbers. So may a random run that ends in a long
//     word: the rule looks at the whole run, so adding letters to one can
//     lower its count.
//
// It is meant for budgets with headroom, not for billing; a budget that
// must hold in a model's tokens counts with tokens/bpe.
package tokens
