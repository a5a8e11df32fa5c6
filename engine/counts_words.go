package engine

import (
	"regexp"
	"strconv"
	"strings"
)

// A scenario's title says how many workers and messages it has ("two workers, six payments").
// When --workers or --messages change those numbers, recount rewrites the words so that the
// title stays true. The verdicts are left alone: "TWO WORKERS CLAIMED THE SAME MESSAGE" tells
// what happened, not how many workers ran.

// numberWords are the counts a title spells out, by value.
var numberWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
	"nine", "ten", "eleven", "twelve"}

// countedNoun finds a count and what it counts: "two workers", "6 payments", "EIGHT WORKERS".
var countedNoun = regexp.MustCompile(`(?i)\b(zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d+) ` +
	`(workers?|payments?|messages?)\b`)

// spell writes n as a title would: a word up to twelve, digits beyond.
func spell(n int) string {
	if n >= 0 && n < len(numberWords) {
		return numberWords[n]
	}
	return strconv.Itoa(n)
}

// recount rewrites the counts of workers and of messages (payments) in text to the given ones,
// keeping each match's case and its way of writing numbers (words or digits). A count that
// already matches is left as it is.
func recount(text string, workers, messages int) string {
	return countedNoun.ReplaceAllStringFunc(text, func(m string) string {
		parts := countedNoun.FindStringSubmatch(m)
		num, noun := parts[1], parts[2]
		n := messages
		if strings.HasPrefix(strings.ToLower(noun), "worker") {
			n = workers
		}
		word := strconv.Itoa(n)
		if _, err := strconv.Atoi(num); err != nil {
			word = spell(n)
		}
		singular := strings.TrimSuffix(strings.TrimSuffix(noun, "s"), "S")
		if n != 1 {
			if strings.ToUpper(noun) == noun {
				singular += "S"
			} else {
				singular += "s"
			}
		}
		if strings.ToUpper(num) == num && strings.ToUpper(noun) == noun && word != strconv.Itoa(n) {
			word = strings.ToUpper(word)
		} else if num[:1] != strings.ToLower(num[:1]) {
			word = strings.ToUpper(word[:1]) + word[1:]
		}
		return word + " " + singular
	})
}

// retitle brings the title in line with the scenario's numbers of workers and messages, after
// overrides changed them.
func (sc *Scenario) retitle() { sc.Title = recount(sc.Title, len(sc.Workers), sc.Messages) }
