// Compare measures unfold side by side with the tools users would pick
// instead, on identical workloads, in one run.
//
// It is run by run.sh, which installs the peers at run time into a
// temporary directory (npm: @vscode/prompt-tsx, gpt-tokenizer, js-tiktoken,
// js-yaml; Debian: python3-pexpect), builds the unfold binary, and calls this
// program. Nothing of the peers is kept in the tree.
//
// # Workloads
//
//   - render: 50 top-level sections of 20 children, every second child
//     summarized (as prompt's BenchmarkRender), against a @vscode/prompt-tsx
//     tree that renders the same headings, bodies and summaries;
//   - budget: 1,000 sections with priorities fitted into 8,000 o200k tokens,
//     against prompt-tsx pruning with gpt-tokenizer as its tokenizer;
//   - scale: the budget tree at 1k, 10k and 100k sections fitted into 8
//     tokens a section, unfold alone, to show the cost per section;
//   - tokens: 1 MB of mixed markdown counted with o200k_base and
//     cl100k_base, against gpt-tokenizer and js-tiktoken, counts checked
//     equal;
//   - bash: 2,000 round trips of `true` per round through envs/bash, a
//     pexpect-driven bash, a bare bash on a pty with a minimal marker (read
//     with plain blocking reads, and read as envs/bash reads, busy-waiting
//     for the reply for bash.DefaultSpin), and a pty running cat;
//   - editor: a screen of five 1,000-line views near the end of a 1 MB file,
//     and a search over 2,000 files (grep -rn as a reference);
//   - serve: commands per second through `unfold serve` over pipes;
//   - skills: 500 Agent Skills loaded by skills.Load, with and without
//     reading every skill's instructions, against a Node.js loader that
//     reads each SKILL.md and parses its front matter with js-yaml, and the
//     file system's floor of opening each SKILL.md; names and descriptions
//     checked equal;
//   - startup: whole unfold processes rendering a small prompt file with
//     the exact and the estimated counter, and printing the help, with the
//     size of the binary.
//
// # Method
//
// Every workload builds its input once and hands the same input to each
// side (the section trees travel to the Node.js worker as JSON). The prompt
// workloads render fresh bodies in every timed iteration on both sides:
// each body gets a last line naming the iteration and the section's path,
// made before the clock starts, so unfold compiles every template each
// time, as prompt-tsx fills its, and no cache keyed by a body serves
// either side. After every round the sides' texts of one such tree are
// checked equal (prompt-tsx's single user message, less the blank line
// after its last section, against unfold's text); a difference fails the
// workload. Rows that reuse a bound prompt (unfold's executed bodies and
// token counts) are reported, without a ratio: the peers have nothing like
// them. Each round
// runs every side once, alternating which goes first, so machine load falls
// on all of them alike. The peers are long-lived worker processes, so their
// start-up and JIT warm-up are not counted; every side runs a warm-up batch
// first. The report gives the median over all iterations, the spread of the
// per-round medians (lowest to highest), and the peer's median over ours.
//
// # Output
//
// A table on stdout, and with -out a markdown file (bench/RESULTS.md) that
// also records the machine, its load, the date and the commands.
package main
