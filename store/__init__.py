"""Persistence (TinyDB + payload files). No Textual here.

``sourcedesk.store.memo_store.MemoStore`` — one memo's frozen source sets, rejections, runs, UI state.
``sourcedesk.store.global_store.GlobalStore`` — rejections that apply to every memo.
"""
