/* strategies.c — the strategies `--strategy` can name: the table the
 * command looks a name up in before it hands the strategy to the engine,
 * which knows none of them. */
#include "strategies/strategies.h"

#include <string.h>

static const cuco_strategy *const strategies[] = {
	&cuco_strategy_tune,
	&cuco_strategy_evolve,
	&cuco_strategy_beam,
	&cuco_strategy_sample,
	NULL,
};

const cuco_strategy *cuco_strategy_find(const char *name)
{
	for (int i = 0; strategies[i]; i++)
		if (strcmp(strategies[i]->name, name) == 0)
			return strategies[i];
	return NULL;
}
