package io.poyang.benchmark.chaos;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The values of one key as small ints for the search: 0 is "absent", every distinct string gets the next id. */
final class ValueTable {

    private final Map<String, Integer> ids = new HashMap<>();
    private final List<String> values = new ArrayList<>();

    ValueTable() {
        values.add(null);
    }

    /** The id of {@code value}, null meaning absent ({@link RegisterModel#ABSENT}). */
    int id(String value) {
        if (value == null) {
            return RegisterModel.ABSENT;
        }
        Integer id = ids.get(value);
        if (id == null) {
            id = values.size();
            ids.put(value, id);
            values.add(value);
        }
        return id;
    }

    /** The value of {@code id}, null for absent. */
    String value(int id) {
        return values.get(id);
    }
}
