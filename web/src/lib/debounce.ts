// A value that follows another once it has stopped changing for `ms` (what is typed, before asking the API).
import { useEffect, useState } from "react";

export function useDebounced<T>(value: T, ms: number): T {
  const [current, setCurrent] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setCurrent(value), ms);
    return () => clearTimeout(timer);
  }, [JSON.stringify(value), ms]);
  return current;
}
