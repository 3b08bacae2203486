module github.com/promptkit/prompts

go 1.24

require (
	github.com/matryer/is v1.4.1
	github.com/oklog/ulid/v2 v2.1.2
)
