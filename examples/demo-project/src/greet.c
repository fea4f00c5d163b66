#include "greet.h"

#include <stdio.h>

void greet(const char *who)
{
	printf("hello from a build under %s\n", who);
}
