// The SQLite wrapper on its own: pragmas, bindings, transactions, errors.

#include "cascade/common/sqlite_db.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <limits>
#include <string>

#include "cascade/tests/store/temp_dir.hpp"

namespace cascade::sqlite {
namespace {

using ::testing::HasSubstr;

class StoreSqliteDb : public ::testing::Test {
 protected:
  std::filesystem::path file() const { return dir_.path() / "test.db"; }

  static std::int64_t count_rows(Db& db) {
    Statement count(db, "SELECT count(*) FROM t");
    EXPECT_TRUE(count.step());
    const auto n = count.column_int64(0);
    count.reset();
    return n;
  }

  static std::string pragma(Db& db, const char* sql) {
    Statement query(db, sql);
    EXPECT_TRUE(query.step());
    auto value = query.column_text(0);
    query.reset();
    return value;
  }

  store_test::TempDir dir_;
};

TEST_F(StoreSqliteDb, NewFileUsesWalTheChosenSynchronousAndNoForeignKeys) {
  Db normal(file(), DbOptions{.synchronous = Synchronous::kNormal});
  EXPECT_EQ(pragma(normal, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(pragma(normal, "PRAGMA synchronous"), "1");
  EXPECT_EQ(pragma(normal, "PRAGMA foreign_keys"), "0");

  Db full(dir_.path() / "full.db", DbOptions{.synchronous = Synchronous::kFull});
  EXPECT_EQ(pragma(full, "PRAGMA synchronous"), "2");
}

TEST_F(StoreSqliteDb, IntegersTextAndBlobsWithZeroBytesRoundTrip) {
  Db db(file(), {});
  db.exec("CREATE TABLE t(i INTEGER, s TEXT, b BLOB)");
  const std::string blob("\x00\xff\x80 bytes\x00", 10);
  Statement insert(db, "INSERT INTO t VALUES (?1, ?2, ?3)");
  insert.bind_int64(1, std::numeric_limits<std::int64_t>::min())
      .bind_text(2, "zone-\xc3\xa9")
      .bind_blob(3, blob)
      .run();
  insert.bind_int64(1, std::numeric_limits<std::int64_t>::max()).bind_text(2, "").bind_blob(3, "");
  insert.run();

  Statement select(db, "SELECT i, s, b FROM t ORDER BY i");
  ASSERT_TRUE(select.step());
  EXPECT_EQ(select.column_int64(0), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(select.column_text(1), "zone-\xc3\xa9");
  EXPECT_EQ(select.column_blob(2), blob);
  ASSERT_TRUE(select.step());
  EXPECT_EQ(select.column_int64(0), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(select.column_text(1), "");
  EXPECT_EQ(select.column_blob(2), "");
  EXPECT_FALSE(select.step());
}

TEST_F(StoreSqliteDb, BorrowedBytesAreReadAtTheRunAndForgottenAfterIt) {
  Db db(file(), {});
  db.exec("CREATE TABLE t(i INTEGER, s TEXT, b BLOB)");
  Statement insert(db, "INSERT INTO t VALUES (?1, ?2, ?3)");
  std::string text = "first";
  std::string blob("\x00\x01", 2);
  insert.bind_int64(1, 1)
      .bind_text(2, text, Statement::Bind::kBorrow)
      .bind_blob(3, blob, Statement::Bind::kBorrow);
  text = "later";  // same length: the bytes change where SQLite points
  blob[1] = '\x02';
  insert.run();
  // A run without binding again: the borrowed bindings are gone (NULL), the
  // copied one stays, as SQLite keeps bindings across a reset.
  insert.bind_int64(1, 2).run();
  insert.bind_int64(1, 3).bind_text(2, "copied").run();
  insert.bind_int64(1, 4).run();

  Statement select(db, "SELECT s, b FROM t ORDER BY i");
  ASSERT_TRUE(select.step());
  EXPECT_EQ(select.column_text(0), "later");
  EXPECT_EQ(select.column_blob(1), std::string("\x00\x02", 2));
  ASSERT_TRUE(select.step());
  EXPECT_TRUE(select.column_is_null(0));
  EXPECT_TRUE(select.column_is_null(1));
  ASSERT_TRUE(select.step());
  EXPECT_EQ(select.column_text(0), "copied");
  ASSERT_TRUE(select.step());
  EXPECT_EQ(select.column_text(0), "copied");
  EXPECT_FALSE(select.step());
}

TEST_F(StoreSqliteDb, UnsignedValuesSurviveTheSignedColumnsBitForBit) {
  for (const std::uint64_t v :
       {std::uint64_t{0}, std::uint64_t{1} << 63, std::numeric_limits<std::uint64_t>::max()}) {
    EXPECT_EQ(to_u64(from_u64(v)), v);
  }
}

TEST_F(StoreSqliteDb, TransactionDestroyedWithoutCommitRollsBack) {
  Db db(file(), {});
  db.exec("CREATE TABLE t(k INTEGER PRIMARY KEY)");
  {
    Transaction txn(db);
    db.exec("INSERT INTO t VALUES (1)");
  }
  EXPECT_EQ(count_rows(db), 0);
  {
    Transaction txn(db);
    db.exec("INSERT INTO t VALUES (2)");
    txn.commit();
  }
  EXPECT_EQ(count_rows(db), 1);
}

TEST_F(StoreSqliteDb, CommittedRowsAreThereAfterReopen) {
  {
    Db db(file(), {});
    db.exec("CREATE TABLE t(k INTEGER PRIMARY KEY)");
    Transaction txn(db);
    db.exec("INSERT INTO t VALUES (1), (2)");
    txn.commit();
  }
  Db reopened(file(), {});
  EXPECT_EQ(count_rows(reopened), 2);
}

TEST_F(StoreSqliteDb, FailedStepThrowsStoreErrorAndLeavesStatementReusable) {
  Db db(file(), {});
  db.exec("CREATE TABLE t(k INTEGER PRIMARY KEY)");
  Statement insert(db, "INSERT INTO t VALUES (?1)");
  insert.bind_int64(1, 7).run();
  try {
    insert.bind_int64(1, 7).run();
    FAIL() << "duplicate key accepted";
  } catch (const StoreError& e) {
    EXPECT_EQ(e.path(), file());
    EXPECT_EQ(e.sqlite_code() & 0xff, SQLITE_CONSTRAINT);
    EXPECT_THAT(e.what(), HasSubstr(file().string()));
    EXPECT_THAT(e.what(), HasSubstr("INSERT INTO t"));
    EXPECT_THAT(e.detail(), HasSubstr("UNIQUE constraint failed"));
  }
  insert.bind_int64(1, 8).run();
  EXPECT_EQ(count_rows(db), 2);
}

TEST_F(StoreSqliteDb, BadSqlThrowsStoreErrorOnPrepare) {
  Db db(file(), {});
  EXPECT_THROW(Statement(db, "SELECT FROM nowhere"), StoreError);
  EXPECT_THROW(db.exec("CREATE TABLE"), StoreError);
}

TEST_F(StoreSqliteDb, FileUnderARegularFileThrowsStoreErrorNamingIt) {
  const auto bad = dir_.unwritable_dir() / "test.db";
  try {
    Db db(bad, {});
    FAIL() << "opened " << bad;
  } catch (const StoreError& e) {
    EXPECT_EQ(e.path(), bad);
    EXPECT_THAT(e.what(), HasSubstr(bad.string()));
    EXPECT_THAT(e.what(), HasSubstr("cannot open database"));
  }
}

TEST_F(StoreSqliteDb, DataDirUnderARegularFileThrowsStoreErrorNamingIt) {
  const auto bad = dir_.unwritable_dir();
  try {
    ensure_data_dir(bad);
    FAIL() << "created " << bad;
  } catch (const StoreError& e) {
    EXPECT_EQ(e.path(), bad);
    EXPECT_THAT(e.what(), HasSubstr(bad.string()));
  }
}

TEST_F(StoreSqliteDb, DataDirThatIsARegularFileIsRefused) {
  const auto bad = dir_.unwritable_dir().parent_path();
  EXPECT_THROW(ensure_data_dir(bad), StoreError);
}

TEST_F(StoreSqliteDb, MissingDataDirIsCreatedWithParents) {
  const auto dir = dir_.path() / "a" / "b";
  ensure_data_dir(dir);
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  ensure_data_dir(dir);  // existing is fine
}

TEST_F(StoreSqliteDb, SchemaVersionIsRecordedOnceAndAnotherVersionIsRefused) {
  Db db(file(), {});
  check_schema_version(db, 3);
  check_schema_version(db, 3);
  EXPECT_EQ(read_meta(db, "schema_version", 0), 3);
  try {
    check_schema_version(db, 4);
    FAIL() << "version 4 accepted a version 3 file";
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("schema version 3"));
  }
}

TEST_F(StoreSqliteDb, OlderSchemaVersionFromTheUpgradableOneIsMarkedCurrent) {
  Db db(file(), {});
  EXPECT_EQ(check_schema_version(db, 1), 0);
  EXPECT_EQ(check_schema_version(db, 2, /*oldest_upgradable=*/1), 1);
  EXPECT_EQ(read_meta(db, "schema_version", 0), 2);
  EXPECT_EQ(check_schema_version(db, 2, 1), 2);
  try {
    check_schema_version(db, 4, /*oldest_upgradable=*/3);
    FAIL() << "version 4 (upgrading from 3) accepted a version 2 file";
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("schema version 2"));
    EXPECT_THAT(e.what(), HasSubstr("versions 3 to 4"));
  }
}

TEST_F(StoreSqliteDb, MetaReadsFallbackForAMissingKeyAndOverwritesOnWrite) {
  Db db(file(), {});
  check_schema_version(db, 1);
  EXPECT_EQ(read_meta(db, "epoch", -5), -5);
  write_meta(db, "epoch", 10);
  write_meta(db, "epoch", 11);
  EXPECT_EQ(read_meta(db, "epoch", 0), 11);
}

}  // namespace
}  // namespace cascade::sqlite
