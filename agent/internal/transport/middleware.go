package transport

import (
	"context"
	"net/http"
	"strconv"
)

type key struct{}

// With returns ctx carrying c, for [Middleware].
func With(ctx context.Context, c *Call) context.Context { return context.WithValue(ctx, key{}, c) }

// Middleware watches every attempt an SDK's client makes of a request
// whose context carries a [Call], as [Post] watches its own: it has the
// signature of the SDKs' option.Middleware, and steers the SDK's retries
// with the headers it reads (Retry-After-Ms, x-should-retry).
func Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	c, _ := req.Context().Value(key{}).(*Call)
	if c == nil {
		return next(req)
	}
	res, err := next(req)
	res, err, retry, wait := c.watch(req.Context(), res, err)
	if res != nil {
		if retry {
			res.Header.Set("Retry-After-Ms", strconv.FormatInt(wait.Milliseconds(), 10))
			res.Header.Del("Retry-After")
		} else {
			res.Header.Set("x-should-retry", "false")
		}
	}
	return res, err
}
