// The training text of the builtin demo tokenizer: English prose written for blueshift (no
// outside source), varied enough in words, numbers, punctuation and dialogue that the merges
// it yields look like an English tokenizer's.
#include "runtime/tokenizer/trainer.h"

namespace bs::tok {

static const char kCorpus[] = R"CORPUS(The lighthouse stood at the end of a long stone pier, and every evening the keeper climbed
its one hundred and twelve steps to light the lamp. She had done this for nineteen years. The
ships that passed in the night never saw her face, but they knew her work: a white flash every
four seconds, steady as a heartbeat, telling them where the rocks were and where the harbor lay.

In the morning she wrote the weather into a thick green book. "Wind from the west, fifteen knots.
Visibility good. Sea state moderate. Two fishing boats out before dawn; both returned by noon."
Some days the entries were short. On the day of the great storm she filled four pages, and her
handwriting grew smaller and smaller as the paper ran out.

People often ask how a small computer can answer questions. The short answer is that it cannot,
not by itself. A language model is a large table of numbers, learned from text, that predicts
which piece of text is likely to come next. The program that runs it reads a prompt, splits it
into tokens, looks each token up in the table, and multiplies many matrices together. Then it
picks a token, prints it, and repeats the whole process until it decides to stop.

A token is not quite a word. Common words such as "the", "and", "of" and "to" are usually a
single token, while a rare word like "anemometer" may be cut into three or four pieces. Numbers
are split into groups of up to three digits: 2024 becomes "202" and "4", and 3.14159 becomes
"3", ".", "141" and "59". Spaces usually belong to the word that follows them.

Recipe for a simple bread. Mix 500 grams of flour, 10 grams of salt, 7 grams of dried yeast and
350 millilitres of warm water. Knead the dough for ten minutes, until it is smooth and springs
back when you press it. Let it rise for one hour in a warm place, shape it into a loaf, and let
it rise again for forty minutes. Bake at 220 degrees for about 35 minutes. The bread is done when
it sounds hollow as you tap the bottom. Wait before cutting it; it is still cooking inside.

"Are you coming with us?" asked Tom.
"I can't," said Mira. "I promised to finish the report by Friday, and it's already Thursday."
"You said that last week."
"I know. This time I mean it. Go without me, and tell me everything tomorrow."
They laughed, and the door closed behind them. The room was quiet again, except for the clock.

Rivers begin as rain. Water falls on the hills, gathers in small streams, and runs downhill
toward the sea. Along the way it carries sand and stones, cuts valleys into rock, and feeds the
fields and forests on its banks. A river can be gentle for a hundred miles and then, after a week
of heavy rain, rise over its banks and flood the towns that were built beside it.

The first rule of measuring anything is to know what you are measuring. The second rule is to
measure it more than once. If you time a program and it takes 12 milliseconds, time it again: it
may take 9 or 15 the next time. Report the median, say how many runs you made, and describe the
machine. A number without its conditions is only a rumor.

Here is a short list of things to check before a long journey:
1. Water, food, and a warm jacket.
2. A map, even if you have a phone.
3. Tell someone where you are going and when you will be back.
4. Check the weather forecast the night before, and again in the morning.

The old library had tall windows and wooden shelves that reached the ceiling. Children came on
Saturday mornings to hear stories, and students came in the evenings to study. The librarian knew
every regular reader by name and remembered which books they liked. When a new book arrived she
would set it aside for the person she thought would enjoy it most.

Mathematics is the study of patterns. Two plus two is four; seven times eight is fifty-six; the
square root of one hundred and forty-four is twelve. A prime number has exactly two divisors: 2,
3, 5, 7, 11, 13, 17, 19, 23 and 29 are the first ten. Every whole number greater than one can be
written as a product of primes in exactly one way, if you ignore the order of the factors.

Good software is written twice: once to learn what the problem really is, and once to solve it.
Tests tell you when a change breaks something that used to work. Error messages should say what
went wrong, where, and what the program expected instead. When a file is damaged, the program
should refuse it clearly rather than guess.

The garden was small but full of life. Tomatoes climbed their sticks in the sunniest corner,
beans curled around strings, and a row of lettuce grew in the shade of the wall. Bees visited the
lavender all afternoon. In the autumn the leaves of the apple tree turned yellow and fell, and
the apples were picked, counted, and stored in boxes in the cool cellar.

Question: What is the capital of France?
Answer: Paris is the capital of France.
Question: How many days are in a week?
Answer: There are seven days in a week.
Question: Why is the sky blue?
Answer: Sunlight is scattered by the air, and blue light is scattered more than red light.

We walked along the beach until the sun went down. The sand was still warm, the waves were small,
and far away the light from the lighthouse began to turn: one flash, then darkness, then another
flash, every four seconds, all through the night.
)CORPUS";

std::string_view builtin_corpus() { return {kCorpus, sizeof(kCorpus) - 1}; }

}  // namespace bs::tok
