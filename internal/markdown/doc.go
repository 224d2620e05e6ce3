// Package markdown holds the text rules that section bodies and screens
// share: dedenting a body ([Dedent]) and finding a code fence it leaves open
// ([OpenFence]), which would swallow the rest of a prompt.
package markdown
