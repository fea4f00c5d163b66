#include "greet.h"

int main(void)
{
	greet("warden");
	return 0;
}
