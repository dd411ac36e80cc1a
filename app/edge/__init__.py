"""What both faces (the JSON API and the website) need at their edge, so neither imports the
other: who is calling (sessions and tokens), CSRF, rate limits (the PIN lockout too), the
protections every request gets, admission control, conflict answers, the request and
response models and their presenters."""
