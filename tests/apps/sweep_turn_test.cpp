// Where `sweep --phase decode` says the step turns compute-bound (app::compute_turn).
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "sweep_transformer.hpp"

using ridgeline::app::compute_turn;
using lead = std::optional<bool>;

TEST(SweepTurn, TheTurnIsWhereComputeLeadsFromThenOn) {
    // memory, memory, compute, compute: the turn is the third size (index 2)
    EXPECT_EQ(compute_turn({lead(false), lead(false), lead(true), lead(true)}), 2u);
    // compute from the first size on: the turn is the first
    EXPECT_EQ(compute_turn({lead(true), lead(true)}), 0u);
    // never compute: none
    EXPECT_EQ(compute_turn({lead(false), lead(false)}), std::nullopt);
    EXPECT_EQ(compute_turn({}), std::nullopt);
}

TEST(SweepTurn, ALeadThatFlipsBackIsNoTurn) {
    // CI saw batch 1 compute 30.4%, memory 30.2% and batch 2 memory ahead: compute at batch 1 only is no turn
    EXPECT_EQ(compute_turn({lead(true), lead(false)}), std::nullopt);
    // compute, memory, compute: the turn is after the last flip (index 2), never at a size a later one contradicts
    EXPECT_EQ(compute_turn({lead(true), lead(false), lead(true)}), 2u);
}

TEST(SweepTurn, UnreadableStepsNeitherStartNorEndARun) {
    // memory, disturbed, compute: the turn is index 2 (a disturbed step is not read as compute)
    EXPECT_EQ(compute_turn({lead(false), std::nullopt, lead(true)}), 2u);
    // compute, disturbed, compute: the run from index 0 holds across the step that cannot be read
    EXPECT_EQ(compute_turn({lead(true), std::nullopt, lead(true)}), 0u);
    // nothing readable: none
    EXPECT_EQ(compute_turn({std::nullopt, std::nullopt}), std::nullopt);
}
