// The simulated clock's event queue pops in (time, client id) order, ties in push order.
#include <gtest/gtest.h>

#include <string>

#include "sim/event_queue.hpp"

using namespace fedsilo;

TEST(EventQueue, PopsByTimeThenClientThenPushOrder) {
  EventQueue<std::string> q;
  q.push(2.0, 3, "late");
  q.push(1.0, 5, "client 5");
  q.push(1.0, 2, "client 2 first");
  q.push(1.0, 2, "client 2 second");
  q.push(0.5, 9, "earliest");
  ASSERT_EQ(q.size(), 5u);
  EXPECT_EQ(q.top().payload, "earliest");
  const char* expected[] = {"earliest", "client 2 first", "client 2 second", "client 5", "late"};
  for (const char* e : expected) EXPECT_EQ(q.pop().payload, e);
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, TopOfAnEmptyQueueIsAnError) {
  EventQueue<int> q;
  EXPECT_ANY_THROW(q.top());
}
