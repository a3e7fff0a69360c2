// ridgeline: GPU-aware profiler for neural-network layers and models (the command line, cli.hpp).
#include <string>
#include <vector>

#include "cli.hpp"

int main(int argc, char** argv) { return ridgeline::app::run_cli(std::vector<std::string>(argv, argv + argc)); }
