"""Persistence (TinyDB + payload files). No Textual here.

``store.memo_store.MemoStore`` — one memo's frozen source sets, rejections, runs, UI state.
``store.global_store.GlobalStore`` — rejections that apply to every memo.
"""
