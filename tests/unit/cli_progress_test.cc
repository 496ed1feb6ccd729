// The `tilec` progress line (tools/tilec/progress.h) with a fake clock, and
// the JSON writer of --json outputs (tools/tilec/json.h).
#include <gtest/gtest.h>

#include <string>

#include "tools/tilec/json.h"
#include "tools/tilec/progress.h"

namespace tilec::tools {
namespace {

struct FakeTerminal {
  double now = 0;
  std::string text;
  Progress Make(bool enabled) {
    return Progress(enabled, [this](std::string_view s) { text += s; }, [this] { return now; });
  }
};

TEST(ProgressTest, NothingShowsWithinTheFirstSecond) {
  FakeTerminal t;
  {
    Progress p = t.Make(true);
    p.Set("compile: lower");
    t.now = 0.5;
    p.Set("compile: tiles, kernel 1 of 2");
    p.Poll();
    t.now = 0.99;
    p.Poll();
  }
  EXPECT_EQ(t.text, "");
}

TEST(ProgressTest, AfterOneSecondTheLineUpdatesInPlaceAndIsErased) {
  FakeTerminal t;
  Progress p = t.Make(true);
  p.Set("compile: lower");
  t.now = 1.0;
  p.Poll();
  EXPECT_EQ(t.text, "\r\x1b[Ktilec: compile: lower");
  p.Poll();  // unchanged: not drawn again
  EXPECT_EQ(t.text, "\r\x1b[Ktilec: compile: lower");
  p.Set("compile: sem, kernel 2 of 2");
  EXPECT_EQ(t.text, "\r\x1b[Ktilec: compile: lower\r\x1b[Ktilec: compile: sem, kernel 2 of 2");
  t.text.clear();
  p.Clear();
  EXPECT_EQ(t.text, "\r\x1b[K");
  t.text.clear();
  p.Clear();  // nothing shown any more: nothing to erase
  EXPECT_EQ(t.text, "");
}

TEST(ProgressTest, DisabledPrintsNothing) {
  FakeTerminal t;
  {
    Progress p = t.Make(false);
    p.Set("compile: lower");
    t.now = 5;
    p.Poll();
    p.Set("run");
    p.Clear();
    ProgressTicker ticker(p);  // no thread when disabled
  }
  EXPECT_EQ(t.text, "");
}

TEST(ProgressTest, CompileStageText) {
  EXPECT_EQ(CompileStageText("compile", "lower", 0, 0), "compile: lower");
  EXPECT_EQ(CompileStageText("compile", "tiles", 1, 5), "compile: tiles, kernel 2 of 5");
}

TEST(JsonTest, WritesValidCompactAndPrettyJson) {
  Json j = Json::Object();
  j.Set("name", "R \"x\"\n").Set("n", 3).Set("x", 0.5).Set("ok", true).Set("none", Json());
  j.Set("dims", Json::ArrayOf(std::vector<int64_t>{1, 56}));
  j.Set("empty", Json::Array()).Set("inf", Json(1.0 / 0.0));
  EXPECT_EQ(j.Dump(),
            "{\"name\": \"R \\\"x\\\"\\n\", \"n\": 3, \"x\": 0.5, \"ok\": true, \"none\": null, "
            "\"dims\": [1, 56], \"empty\": [], \"inf\": null}");
  Json a = Json::Array();
  a.Push(1).Push(Json::Object().Set("k", "v").Set("dims", Json::ArrayOf(std::vector<int64_t>{2, 3})));
  EXPECT_EQ(a.Dump(2), "[\n  1,\n  {\n    \"k\": \"v\",\n    \"dims\": [2, 3]\n  }\n]");
  EXPECT_EQ(JsonQuote(std::string("\x01", 1)), "\"\\u0001\"");
}

}  // namespace
}  // namespace tilec::tools
