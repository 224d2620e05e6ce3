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
// of the exact count on each; the test pins that bound. It is meant for
// budgets with headroom, not for billing.
package tokens
